import { shutdownOnSignals } from '../shutdown-signals.js';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../../config/config.js';
import { createLogger } from '../../config/logger.js';
import { exitOnFatalErrors } from '../fatal-errors.js';
import { assertPortsFree } from '../../config/port-check.js';
import type { ExternalSimulator } from '../../demo/simulator-client.js';
import type { Service } from '../../main.js';
import { dataDirOpt, keyFileOpt, type StoreFlags } from '../admin-store.js';
import { out } from '../output.js';

export function serveCommand(program: Command): void {
  program
    .command('serve')
    .description('run the service (both route families, the copy engine and the embedded store)')
    // No commander defaults: HOST and PORT from the environment apply unless a flag is given (config's defaults last).
    .option('--host <host>', 'address to bind (default $HOST or 127.0.0.1)')
    .option('--port <port>', 'port of family R, and of family V unless --v1-port is given (default $PORT or 8080)')
    .option('--v1-port <port>', 'serve family V on its own port')
    .option(...dataDirOpt)
    .option(...keyFileOpt)
    .option('--demo', 'seed a demo user, a copier group and simulated accounts')
    .option(
      '--simulator <where>',
      'demo brokers: "auto" (a `copytrade simulator` process for the data dir, started unless running), ' +
        'an endpoints file written by `copytrade simulator`, or "in-process"',
      process.env.COPYTRADE_SIMULATOR ?? 'auto',
    )
    .option('--json', 'print the startup summary as JSON')
    .action(
      async (o: StoreFlags & { host?: string; port?: string; v1Port?: string; demo?: boolean; simulator: string }) => {
        const cfg = loadConfig({
          ...(o.host ? { host: o.host } : {}),
          ...(o.port ? { port: o.port } : {}),
          ...(o.v1Port ? { v1Port: o.v1Port } : {}),
          ...(o.dataDir ? { dataDir: o.dataDir } : {}),
          ...(o.secretKeyFile ? { secretKeyFile: o.secretKeyFile } : {}),
          demo: !!o.demo,
        });
        // First, before the simulator or the store touch the data dir: a taken port fails at once.
        await assertPortsFree(cfg.host, [cfg.port, cfg.v1Port]);
        const logger = createLogger(cfg.logLevel);
        exitOnFatalErrors({ log: (fields, msg) => logger.fatal(fields, msg) });
        // Loaded now, while the simulator starts in its own process: both take seconds on a busy machine.
        const service = import('../../main.js');
        let pending: Promise<ExternalSimulator> | null = null;
        if (cfg.demo && o.simulator !== 'in-process' && !(o.simulator === 'auto' && cfg.dataDir === ':memory:')) {
          // The brokers outlive the service (kill -9 included): what they confirmed is still there at the next start.
          const { ensureSimulator, connectSimulator } = await import('../../demo/simulator-client.js');
          pending =
            o.simulator === 'auto'
              ? ensureSimulator(join(cfg.dataDir, 'simulator'), '127.0.0.1')
              : connectSimulator(resolve(o.simulator));
          // Awaited by the service once its store is open; a failure is reported there, not as an unhandled rejection.
          pending.catch(() => undefined);
        }
        // Before the start: see shutdownOnSignals for what a signal does while starting and stopping.
        const signals = shutdownOnSignals({ log: (level, fields, msg) => logger[level](fields, msg) });
        let simulator: ExternalSimulator | null = null;
        // A forced exit skips the close, which would stop the demo's brokers: they are asked to stop here instead.
        signals.onForcedExit(() => {
          if (simulator && o.simulator === 'auto') simulator.signalStop();
        });
        let svc: Service;
        try {
          const { startService } = await service;
          svc = await startService(cfg, logger, {
            ...(pending ? { simulator: pending } : {}),
            startAborted: signals.startAborted,
          });
        } catch (err) {
          const started = await pending?.catch(() => null);
          if (started?.spawned) await started.stop();
          // Stopped while it waited for PostgreSQL: nothing was opened, a clean stop.
          // (By name: the store code is loaded only with the service.)
          if (signals.startAborted.aborted && (err as Error | null)?.name === 'StoreWaitAborted') {
            logger.info('stopped before the start was done (PostgreSQL was not reachable yet)');
            process.exit(0);
          }
          throw err;
        }
        simulator = pending ? await pending : null;
        const simInfo = simulator
          ? { pid: simulator.pid, endpointsFile: simulator.endpointsFile, spawned: simulator.spawned }
          : null;
        printSummary(svc, cfg.dataDir, simInfo, !!o.json);
        signals.ready(async () => {
          await svc.close();
          // After the service: its last writes and drains still reach the brokers.
          if (simulator && o.simulator === 'auto') await simulator.stop();
        });
      },
    );
}

/** What a person (or with --json, a script) needs once the service is up: where it is, and the demo's sign-ins. */
function printSummary(
  svc: Service,
  dataDir: string,
  simInfo: { pid: number; endpointsFile: string; spawned: boolean } | null,
  json: boolean,
): void {
  const summary = {
    baseUrl: svc.baseUrl,
    v1BaseUrl: svc.v1BaseUrl,
    store: svc.store.database.kind,
    dataDir: svc.store.database.location,
    demo: svc.demo,
    simulator: simInfo,
  };
  if (json) out(true, summary, '');
  else {
    const lines = [
      '',
      `copytrade is running (store: ${summary.store} at ${summary.dataDir})`,
      `  family R  ${svc.baseUrl}/api      OpenAPI ${svc.baseUrl}/openapi.json   reference ${svc.baseUrl}/docs`,
      `  family V  ${svc.v1BaseUrl}/v1`,
    ];
    if (simInfo)
      lines.push(
        `  simulated brokers: process ${simInfo.pid}${simInfo.spawned ? '' : ' (already running)'}, endpoints in ${simInfo.endpointsFile}`,
      );
    if (svc.demo) {
      lines.push(
        '',
        `Demo credentials (also in ${dataDir}/demo-credentials.json):`,
        `  email        ${svc.demo.email}`,
        `  password     ${svc.demo.password}`,
        `  accessToken  ${svc.demo.accessToken}   (family R: Authorization: Bearer ...)`,
        `  apiKey       ${svc.demo.apiKey}   (family V: Authorization: Bearer ...)`,
        '',
        'Try:',
        `  curl -s -H "Authorization: Bearer ${svc.demo.apiKey}" ${svc.v1BaseUrl}/v1/accounts`,
      );
    }
    process.stderr.write(`${lines.join('\n')}\n\n`);
  }
}
