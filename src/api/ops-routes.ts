import { createHash, timingSafeEqual } from 'node:crypto';
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import type { Readiness } from '../metrics/readiness.js';
import { sendError } from './errors.js';

/** What the operator-facing routes of a process read: its metrics registry and its readiness checks. */
export interface OpsRoutes {
  metrics: ServiceMetrics;
  readiness: Readiness;
  /** When set, /metrics asks for it as a bearer token (COPYTRADE_METRICS_TOKEN). */
  metricsToken?: string | undefined;
  /**
   * The listener users reach (the route families' port): there /metrics is served only when a metrics token is
   * configured, and asks for it; without one it is not served (404). A worker's own probes listener leaves it open.
   */
  publicListener?: boolean;
}

const CheckSchema = Type.Object({
  ok: Type.Boolean(),
  error: Type.Optional(Type.Union([Type.Literal('timeout'), Type.Literal('unavailable')])),
  ms: Type.Number({ description: 'how long the check took' }),
});
const ReadinessSchema = Type.Object(
  {
    ready: Type.Boolean(),
    checks: Type.Record(Type.String(), CheckSchema, {
      description: 'one entry per part this process needs: store, bus (when NATS_URL is set), leases (workers)',
    }),
  },
  { additionalProperties: false },
);

const sha256 = (s: string) => createHash('sha256').update(s).digest();

/**
 * /readyz (JSON, public like /healthz: it names checks, nothing else) and /metrics (Prometheus text, open
 * unless a token is configured, and off on the public listener without one; labelled by platform and reason, never by user or account, so an open scrape
 * leaks no one's activity). Both are for the operator's probes and scraper, not for users.
 */
export async function opsRoutes(app: FastifyInstance, ops: OpsRoutes): Promise<void> {
  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'getReadiness',
        tags: ['Service'],
        security: [],
        'x-open-point': true,
        summary: 'Readiness of this process: 200 when every check passes, 503 with the same body otherwise',
        response: { 200: ReadinessSchema, 503: ReadinessSchema },
      } as never,
      // Probes come every few seconds: their requests are not worth a log line each.
      logLevel: 'warn',
    },
    async (_req, reply) => {
      const report = await ops.readiness.report();
      reply.code(report.ready ? 200 : 503).header('cache-control', 'no-store');
      return report;
    },
  );

  const expected = ops.metricsToken ? sha256(ops.metricsToken) : null;
  if (!expected && ops.publicListener) return;
  app.get('/metrics', { schema: { hide: true }, logLevel: 'warn' }, async (req, reply) => {
    if (expected) {
      const m = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
      if (!m || !timingSafeEqual(sha256(m[1]!), expected))
        return sendError(req, reply, 401, 'unauthorized', 'the metrics token is missing or wrong');
    }
    reply.type(ops.metrics.contentType).header('cache-control', 'no-store');
    return ops.metrics.text();
  });
}
