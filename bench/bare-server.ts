// The floor for the HTTP benchmark: a bare Fastify route serving a precomputed body of the same size.
import Fastify from 'fastify';

const n = Number(process.argv[2] ?? 100);
const body = JSON.stringify({
  accounts: Array.from({ length: n }, (_, i) => ({
    id: `acc_${i}`,
    platform: 'sim',
    role: 'slave',
    status: 'connected',
    health: { state: 'ok' },
    name: `Account ${i}`,
    balance: 10000,
  })),
});
const app = Fastify({ logger: false });
app.get('/bare', async (_req, reply) => reply.type('application/json').send(body));
const addr = await app.listen({ host: '127.0.0.1', port: Number(process.argv[3] ?? 0) });
process.stdout.write(`${addr}\n`);
