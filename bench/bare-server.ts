// The floor for the HTTP benchmark: a bare Fastify route sending exactly the bytes the service sent (read from
// the file given), with the same content type, so only our work differs.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const body = readFileSync(process.argv[2]!);
const app = Fastify({ logger: false });
app.get('/bare', async (_req, reply) => reply.type('application/json; charset=utf-8').send(body));
const addr = await app.listen({ host: '127.0.0.1', port: Number(process.argv[3] ?? 0) });
process.stdout.write(`${addr}\n`);
