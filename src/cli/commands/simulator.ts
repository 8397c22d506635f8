import { shutdownOnSignals } from '../shutdown-signals.js';
import { join } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_DATA_DIR } from '../../config/config.js';
import { out } from '../output.js';

export function simulatorCommand(program: Command): void {
  program
    .command('simulator')
    .description(
      'run the simulated brokers (TradeLocker, DXtrade, cTrader and MetaApi front ends over one market) in their own process',
    )
    .option('--data-dir <dir>', 'where the simulator keeps its state', join(DEFAULT_DATA_DIR, 'simulator'))
    .option('--host <host>', 'address to bind (loopback)', '127.0.0.1')
    .option('--endpoints-file <file>', 'where to write the endpoints (default DATA_DIR/endpoints.json)')
    .option('--json', 'print the endpoints as one JSON line when ready')
    .action(async (o: { dataDir: string; host: string; endpointsFile?: string; json?: boolean }) => {
      const { runSimulator } = await import('../../demo/simulator-process.js');
      const sim = await runSimulator({
        dataDir: o.dataDir,
        host: o.host,
        ...(o.endpointsFile ? { endpointsFile: o.endpointsFile } : {}),
      });
      const e = sim.endpoints;
      out(
        o.json,
        { endpointsFile: sim.endpointsFile, pid: e.pid },
        [
          `copytrade simulator ${e.pid} is running (state in ${e.dataDir})`,
          `  TradeLocker  ${e.platformb.demoUrl} (demo)  ${e.platformb.liveUrl} (live)`,
          ...(e.platformd ? [`  DXtrade      ${e.platformd.demoUrl} (demo)  ${e.platformd.liveUrl} (live)`] : []),
          `  cTrader      ${e.platformc.demo.host}:${e.platformc.demo.port} (demo)  :${e.platformc.live.port} (live)  OAuth ${e.platformc.oauthBaseUrl}  CA ${e.platformc.caFile}`,
          `  MetaApi      ${e.platforma.baseUrl} (provisioning; ${Object.keys(e.platforma.hosts ?? {}).length} host names in the endpoints file)`,
          `  endpoints and secrets in ${sim.endpointsFile}`,
        ].join('\n'),
      );
      // Whoever started us may be gone (killed): a write to its closed pipe must not take the brokers down.
      process.stdout.on('error', () => undefined);
      shutdownOnSignals().ready(() => sim.close());
    });
}
