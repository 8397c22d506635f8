import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../../config/config.js';
import { createLogger } from '../../config/logger.js';
import type { ExternalSimulator } from '../../demo/simulator-client.js';
import { DEFAULT_LEASE_TTL_MS } from '../../domain/lease.js';
import { requireScaleOut } from '../../roles/scale-out.js';
import { keyFileOpt } from '../admin-store.js';
import { exitOnFatalErrors } from '../fatal-errors.js';
import { out } from '../output.js';
import { shutdownOnSignals } from '../shutdown-signals.js';

interface RoleFlags {
  host?: string;
  port?: string;
  v1Port?: string;
  secretKeyFile?: string;
  simulator?: string;
  leaseTtl?: string;
  json?: boolean;
}

/**
 * The configuration of an `api` or `worker` process. Its data dir is `:memory:`: the store is PostgreSQL and
 * nothing else of it may be shared between processes on one machine (the in-process `sim` platform's market is
 * this process's own and not kept).
 */
function roleConfig(o: RoleFlags, role: 'api' | 'worker') {
  const cfg = loadConfig({
    ...(o.host ? { host: o.host } : {}),
    ...(o.port ? { port: o.port } : {}),
    ...(o.v1Port ? { v1Port: o.v1Port } : {}),
    ...(o.secretKeyFile ? { secretKeyFile: o.secretKeyFile } : {}),
    dataDir: ':memory:',
    demo: false,
  });
  requireScaleOut(cfg, role);
  return cfg;
}

async function simulatorOf(o: RoleFlags): Promise<ExternalSimulator | null> {
  if (!o.simulator) return null;
  const { connectSimulator } = await import('../../demo/simulator-client.js');
  return connectSimulator(resolve(o.simulator));
}

function onSignals(
  close: () => Promise<void>,
  logger: { info(o: object, m: string): void; warn(o: object, m: string): void },
): void {
  shutdownOnSignals({ log: (level, fields, msg) => logger[level](fields, msg) }).ready(close);
}

const simulatorOpt = [
  '--simulator <file>',
  'reach the brokers of a `copytrade simulator` process (its endpoints file) instead of the real platforms',
] as const;

export function apiCommand(program: Command): void {
  program
    .command('api')
    .description('run the HTTP families, the dashboard and the event stream (PostgreSQL and NATS; beside workers)')
    .option('--host <host>', 'address to bind (default $HOST or 127.0.0.1)')
    .option('--port <port>', 'port of family R, and of family V unless --v1-port is given (default $PORT or 8080)')
    .option('--v1-port <port>', 'serve family V on its own port')
    .option(...keyFileOpt)
    .option(...simulatorOpt)
    .option('--json', 'print the startup summary as JSON')
    .action(async (o: RoleFlags) => {
      const cfg = roleConfig(o, 'api');
      const logger = createLogger(cfg.logLevel);
      exitOnFatalErrors({ log: (fields, msg) => logger.fatal(fields, msg) });
      const simulator = await simulatorOf(o);
      const { startApi } = await import('../../roles/api.js');
      const api = await startApi(cfg, logger, simulator ? { simulator } : {});
      out(o.json, { role: 'api', pid: process.pid, baseUrl: api.baseUrl, v1BaseUrl: api.v1BaseUrl }, '');
      onSignals(api.close, logger);
    });
}

export function workerCommand(program: Command): void {
  program
    .command('worker')
    .description(
      'run broker connections and the copy engine for the accounts whose leases it takes (PostgreSQL and NATS)',
    )
    .option('--host <host>', 'address of the probes listener (default $HOST or 127.0.0.1)')
    .option('--port <port>', 'serve /healthz, /readyz and /metrics on this port (none by default)')
    .option(...keyFileOpt)
    .option(...simulatorOpt)
    .option(
      '--lease-ttl <ms>',
      'a lease not renewed for this long is taken over (default $COPYTRADE_LEASE_TTL_MS or 4000)',
    )
    .option('--json', 'print the startup summary as JSON')
    .action(async (o: RoleFlags) => {
      const cfg = roleConfig(o, 'worker');
      const ttl = Number(o.leaseTtl ?? process.env.COPYTRADE_LEASE_TTL_MS ?? DEFAULT_LEASE_TTL_MS);
      if (!Number.isInteger(ttl) || ttl < 1000) throw new Error(`--lease-ttl must be an integer >= 1000, got ${ttl}`);
      const logger = createLogger(cfg.logLevel);
      exitOnFatalErrors({ log: (fields, msg) => logger.fatal(fields, msg) });
      const simulator = await simulatorOf(o);
      const { startWorker } = await import('../../roles/worker.js');
      const worker = await startWorker(cfg, logger, {
        leaseTtlMs: ttl,
        ...(simulator ? { simulator } : {}),
        ...(o.port !== undefined ? { probesPort: cfg.port } : {}),
      });
      out(
        o.json,
        {
          role: 'worker',
          pid: process.pid,
          instanceId: worker.instanceId,
          leases: worker.keeper.heldKeys().length,
          probesUrl: worker.probesUrl,
        },
        '',
      );
      onSignals(worker.close, logger);
    });
}
