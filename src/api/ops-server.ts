import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { opsRoutes, type OpsRoutes } from './ops-routes.js';
import { newRequestId } from './plugins/request-records.js';

export interface OpsListener {
  url: string;
  close(): Promise<void>;
}

/**
 * The probes and metrics alone, for a process that serves no route family (a worker): /healthz, /readyz and
 * /metrics on a port of their own. A process with the families serves the same routes on its main port instead
 * (buildServer's `ops`).
 */
export async function startOpsListener(
  ops: OpsRoutes,
  opts: { host: string; port: number; logger: Logger | false },
): Promise<OpsListener> {
  const app = Fastify({
    loggerInstance: opts.logger || undefined,
    logger: opts.logger ? undefined : false,
    genReqId: () => newRequestId(),
    bodyLimit: 1024,
  }) as unknown as FastifyInstance;
  app.get('/healthz', { logLevel: 'warn' }, async () => ({ ok: true }));
  await opsRoutes(app, ops);
  const url = await app.listen({
    host: opts.host,
    port: opts.port,
    listenTextResolver: (a) => `probes and metrics at ${a}`,
  });
  return { url, close: () => app.close() };
}
