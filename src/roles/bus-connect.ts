import type { Logger } from 'pino';
import type { NatsBus } from '../bus/nats-bus.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import type { Readiness } from '../metrics/readiness.js';
import type { OpsListener } from '../api/ops-server.js';

export interface BusWaitOptions {
  logger: Logger | false;
  readiness: Readiness;
  metrics: ServiceMetrics;
  metricsToken: string | undefined;
  /**
   * Where this process answers /readyz once started (an api's main port, a worker's probes port): while NATS
   * cannot be reached, a listener there answers 503 with the `bus` check failing, and closes once it connects.
   */
  probes?: { host: string; port: number };
}

/** The NATS URL as it may be logged: no user or password. */
export function redactNatsUrl(url: string): string {
  return url
    .split(',')
    .map((one) => {
      try {
        const u = new URL(one.trim());
        u.username = '';
        u.password = '';
        return u.toString().replace(/\/$/, '');
      } catch {
        return '<nats url>';
      }
    })
    .join(',');
}

/**
 * The NATS connection of an api or worker process. Started while NATS is unreachable, the process waits for it
 * (a warning per attempt, the server named without credentials; /readyz 503 with `bus` failing) instead of exiting.
 */
export async function connectBusWhenUp(url: string, o: BusWaitOptions): Promise<NatsBus> {
  const { NatsBus } = await import('../bus/nats-bus.js');
  let waiting: OpsListener | null = null;
  let offCheck: (() => void) | null = null;
  try {
    return await NatsBus.connectWhenUp(url, {
      onWait: async ({ attempt, retryInMs, error }) => {
        if (o.logger)
          o.logger.warn(
            {
              nats: redactNatsUrl(url),
              attempt,
              retryInMs,
              reason: (error as { code?: string }).code ?? 'unreachable',
            },
            'NATS is not reachable: not ready, trying again (the process starts once it connects)',
          );
        offCheck ??= o.readiness.register('bus', async () => {
          throw new Error('NATS is not reachable yet');
        });
        if (!waiting && o.probes) {
          const { startOpsListener } = await import('../api/ops-server.js');
          waiting = await startOpsListener(
            { metrics: o.metrics, readiness: o.readiness, metricsToken: o.metricsToken },
            { host: o.probes.host, port: o.probes.port, logger: false },
          );
        }
      },
    });
  } finally {
    (offCheck as (() => void) | null)?.();
    await (waiting as OpsListener | null)?.close();
  }
}
