import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { runAdminOp, type AdminDeps } from '../../admin/ops.js';
import { AppError } from '../../domain/errors.js';
import { errorHandler, sendError } from '../errors.js';
import { newRequestId } from '../plugins/request-records.js';

/** What `operator.json` in the data dir holds: where the listener is and the token that opens it. */
export interface OperatorFile {
  url: string;
  token: string;
  pid: number;
}

export interface OperatorListener {
  url: string;
  close(): Promise<void>;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest();

/**
 * The operator's way into a running service whose embedded store it holds (PGlite is single-process, so the
 * CLI cannot open it beside the server): a listener on 127.0.0.1 on a port of its own (never the public one,
 * whatever --host says), opened by a random token written to `file` with mode 0600, so only the user who runs
 * the service (who could read the store's files anyway) can use it. One route: POST /operator/ops/{name}
 * runs an admin operation (admin/ops.ts) with the JSON body as its arguments. Only the token's hash is kept
 * in memory; the file is removed on close and replaced at every start.
 */
export async function startOperatorListener(
  deps: AdminDeps,
  file: string,
  logger: Logger | false,
): Promise<OperatorListener> {
  const token = `ctop_${randomBytes(32).toString('base64url')}`;
  const expected = sha256(token);
  const app = Fastify({
    loggerInstance: logger || undefined,
    logger: logger ? undefined : false,
    genReqId: () => newRequestId(),
    bodyLimit: 16 * 1024,
  }) as unknown as FastifyInstance;
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((req, reply) =>
    sendError(req, reply, 404, 'not_found', `no route ${req.method} ${req.url.split('?')[0]}`),
  );
  app.addHook('onRequest', async (req) => {
    const m = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    if (!m || !timingSafeEqual(sha256(m[1]!), expected))
      throw new AppError(
        'unauthorized',
        'the operator token is missing or wrong (read it from operator.json in the data dir)',
      );
  });
  app.post<{ Params: { name: string }; Body: Record<string, unknown> | undefined }>(
    '/operator/ops/:name',
    async (req) => {
      const body = req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? req.body : {};
      return { result: await runAdminOp(deps, req.params.name, body) };
    },
  );
  const url = await app.listen({ host: '127.0.0.1', port: 0, listenTextResolver: (a) => `operator listener at ${a}` });
  const content: OperatorFile = { url, token, pid: process.pid };
  // Replace, never reuse: a file left by a killed run holds a token nobody answers any more.
  rmSync(file, { force: true });
  writeFileSync(file, `${JSON.stringify(content)}\n`, { mode: 0o600 });
  return {
    url,
    async close() {
      rmSync(file, { force: true });
      await app.close();
    },
  };
}
