import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { claimLockFile, processStartTime } from '../config/process-identity.js';
import { SimBroker } from '../simulator/broker.js';
import { SimPersistence } from '../simulator/persistence.js';
import { UpstreamState } from '../simulator/upstream-state.js';
import { startSimulatedBrokers } from './simulated-brokers.js';
import { startControlServer } from './simulator-control.js';

/** What `copytrade simulator` writes for the service (and tests) to find it. Holds secrets: mode 0600. */
export interface SimulatorEndpoints {
  version: 1;
  pid: number;
  /** The process's start time (see config/process-identity.ts): with the pid, names this very process. */
  startedAt?: string | null;
  dataDir: string;
  /** Names the OAuth tokens and MetaApi accounts this simulator keeps across its restarts (see UpstreamState). */
  stateId: string;
  control: { url: string; token: string };
  platformb: { demoUrl: string; liveUrl: string };
  /** Absent in a file written before platform D: the client then has no DXtrade. */
  platformd?: { demoUrl: string; liveUrl: string };
  platformc: {
    demo: { host: string; port: number };
    live: { host: string; port: number };
    oauthBaseUrl: string;
    clientId: string;
    clientSecret: string;
    /** PEM of the self-signed certificate of the cTrader TLS endpoints; clients trust exactly it. */
    caFile: string;
  };
  /** MetaApi: the provisioning base and, for the derived client-API and streaming host names, their ports. */
  platforma: { baseUrl: string; token: string; hosts?: Record<string, string> };
}

export interface RunningSimulator {
  endpoints: SimulatorEndpoints;
  endpointsFile: string;
  close(): Promise<void>;
}

export const ENDPOINTS_FILE = 'endpoints.json';

/** One simulator per state dir: two would interleave their journals. A lock of a dead process is taken over. */
function lock(dataDir: string): () => void {
  const file = join(dataDir, 'simulator.lock');
  const holder = claimLockFile(file);
  if (holder !== null) throw new Error(`simulator state dir ${dataDir} is in use by process ${holder}`);
  return () => rmSync(file, { force: true });
}

function writeAtomically(file: string, text: string): void {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, file);
}

/**
 * The simulated brokers as a process of their own (`copytrade simulator`): one market with its TradeLocker,
 * cTrader and MetaApi front ends and the control API, its state journalled in `dataDir` before any answer, so
 * the service can be killed and restarted (or this process restarted) without losing what a broker confirmed.
 */
export async function runSimulator(o: {
  dataDir: string;
  host?: string;
  endpointsFile?: string;
  priceIntervalMs?: number;
}): Promise<RunningSimulator> {
  const dataDir = resolve(o.dataDir);
  const host = o.host ?? '127.0.0.1';
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const unlock = lock(dataDir);
  const cleanup: Array<() => Promise<void> | void> = [unlock];
  const close = async () => {
    for (const step of cleanup.splice(0)) await step();
  };
  try {
    const persistence = new SimPersistence(join(dataDir, 'simulator.json'));
    const snapshot = persistence.load();
    const broker = new SimBroker(snapshot === undefined ? {} : { snapshot });
    persistence.attach(broker);
    cleanup.unshift(() => persistence.detach(broker));
    broker.start(o.priceIntervalMs ?? 1000);
    cleanup.unshift(() => broker.stop());
    const kept = new UpstreamState(join(dataDir, 'upstreams.json'), snapshot === undefined);
    const sim = await startSimulatedBrokers(broker, host, kept);
    cleanup.unshift(sim.close);
    const token = randomBytes(24).toString('base64url');
    const control = await startControlServer(broker, sim, { host, token });
    cleanup.unshift(control.close);

    const caFile = join(dataDir, 'ctrader-ca.pem');
    writeFileSync(caFile, sim.ctrader.ca, { mode: 0o644 });
    const e = sim.endpoints;
    const endpoints: SimulatorEndpoints = {
      version: 1,
      pid: process.pid,
      startedAt: processStartTime(process.pid),
      dataDir,
      stateId: kept.stateId,
      control: { url: control.url, token },
      platformb: { demoUrl: e.platformb.baseUrl('demo'), liveUrl: e.platformb.baseUrl('live') },
      platformd: { demoUrl: e.platformd.baseUrl('', 'demo'), liveUrl: e.platformd.baseUrl('', 'live') },
      platformc: {
        ...sim.ctrader.endpoints,
        oauthBaseUrl: sim.ctrader.oauthBaseUrl,
        clientId: sim.ctrader.clientId,
        clientSecret: sim.ctrader.clientSecret,
        caFile,
      },
      platforma: { baseUrl: e.platforma.baseUrl, token: e.platforma.token, hosts: e.platforma.hosts ?? {} },
    };
    const endpointsFile = resolve(o.endpointsFile ?? join(dataDir, ENDPOINTS_FILE));
    writeAtomically(endpointsFile, `${JSON.stringify(endpoints, null, 2)}\n`);
    // Stale endpoints are worse than none: whoever reads the file after we stop must not dial dead ports.
    cleanup.unshift(() => rmSync(endpointsFile, { force: true }));
    return { endpoints, endpointsFile, close };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
