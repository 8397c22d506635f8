import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { TokenPair } from '../simulator/ctrader/index.js';
import type { SimRequestStatsView } from '../simulator/ctrader/request-stats.js';
import type { DemoBrokers, DemoSimAccount } from './demo-brokers.js';
import { type ProcessIdentity, signalProcess, stillRunning } from '../config/process-identity.js';
import { ENDPOINTS_FILE, type SimulatorEndpoints } from './simulator-process.js';

export interface ExternalSimulator extends DemoBrokers {
  pid: number;
  endpointsFile: string;
  /** True when this process started it (rather than finding it running). */
  spawned: boolean;
  /** Stops the simulator process and waits until it is gone. */
  stop(): Promise<void>;
  /** Asks it to stop (SIGTERM) without waiting: for a service that is exiting at once. */
  signalStop(): void;
  /** The cTrader requests the simulator received so far, per payload type (benches). */
  ctraderRequests(): Promise<SimRequestStatsView>;
}

function readEndpoints(file: string): SimulatorEndpoints {
  let e: SimulatorEndpoints;
  try {
    e = JSON.parse(readFileSync(file, 'utf8')) as SimulatorEndpoints;
  } catch (err) {
    throw new Error(`simulator endpoints file ${file} is unreadable: ${(err as Error).message}`);
  }
  if (e.version !== 1 || !e.control?.url)
    throw new Error(`${file} is not a copytrade simulator endpoints file (version 1)`);
  return e;
}

/** The simulator described by an endpoints file, checked alive over its control API. */
export async function connectSimulator(file: string, o: { spawned?: boolean } = {}): Promise<ExternalSimulator> {
  const e = readEndpoints(file);
  const call = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    const res = await fetch(e.control.url + path, {
      method,
      headers: {
        authorization: `Bearer ${e.control.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    });
    const json = (await res.json()) as T & { error?: string };
    if (!res.ok) throw new Error(`simulator control ${method} ${path}: ${res.status} ${json.error ?? ''}`);
    return json;
  };
  const health = await call<{ pid: number }>('GET', '/health');
  if (health.pid !== e.pid)
    throw new Error(`simulator at ${e.control.url} is process ${health.pid}, not ${e.pid} of ${file}`);
  const ca = readFileSync(e.platformc.caFile, 'utf8');
  const c = e.platformc;
  return {
    pid: e.pid,
    endpointsFile: file,
    spawned: o.spawned ?? false,
    hostsSimPlatform: false,
    stateId: e.stateId ?? null,
    endpoints: {
      platformb: { baseUrl: (env) => (env === 'live' ? e.platformb.liveUrl : e.platformb.demoUrl) },
      platformd: {
        baseUrl: (_server, env) => {
          if (!e.platformd) throw new Error(`${file} names no DXtrade simulator (written by an older simulator)`);
          return env === 'live' ? e.platformd.liveUrl : e.platformd.demoUrl;
        },
      },
      platformc: {
        endpoint: (env) => ({ ...c[env], ca }),
        oauthBaseUrl: c.oauthBaseUrl,
        clientId: c.clientId,
        clientSecret: c.clientSecret,
      },
      platforma: {
        baseUrl: e.platforma.baseUrl,
        token: e.platforma.token,
        ...(e.platforma.hosts ? { hosts: e.platforma.hosts } : {}),
      },
    },
    createAccount: (init) => call<DemoSimAccount>('POST', '/accounts', { ...init, balance: String(init.balance) }),
    accounts: () => call<DemoSimAccount[]>('GET', '/accounts'),
    issueCTraderToken: (ctidUserId) => call<TokenPair>('POST', '/ctrader/tokens', { ctidUserId }),
    startEa: async (t) => void (await call<{ ok: true }>('POST', '/eas', t)),
    stopEas: async () => {},
    stop: () => stopProcess(identityOf(e)),
    signalStop: () => void signalProcess(identityOf(e), 'SIGTERM'),
    ctraderRequests: () => call<SimRequestStatsView>('GET', '/ctrader/requests'),
  };
}

/** How long a spawned simulator may take to say it is ready (its start takes seconds on a loaded machine). */
const SIMULATOR_START_MS = 120_000;

/** An endpoints file of an older version has no start time: its pid is then all there is to go by. */
const identityOf = (e: SimulatorEndpoints): ProcessIdentity => ({ pid: e.pid, startedAt: e.startedAt ?? null });

async function stopProcess(id: ProcessIdentity, timeoutMs = 15_000): Promise<void> {
  // Signalled only while it is the very process of the file: once it has exited its pid may be a stranger's.
  if (!signalProcess(id, 'SIGTERM')) return;
  // Not our child when adopted, so there is no exit event to wait on: ask the kernel until it is gone.
  const until = Date.now() + timeoutMs;
  while (stillRunning(id)) {
    if (Date.now() > until) {
      signalProcess(id, 'SIGKILL');
      return;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The demo's simulator for a data dir: the one already running there (a service killed with -9 left it running,
 * with every broker's state) or a new `copytrade simulator` child in its own process group, so a Ctrl-C of the
 * service reaches the service only, which stops the simulator after its own shutdown.
 */
export async function ensureSimulator(simDir: string, host: string): Promise<ExternalSimulator> {
  const file = join(simDir, ENDPOINTS_FILE);
  if (existsSync(file)) {
    if (stillRunning(identityOf(readEndpoints(file)))) {
      try {
        return await connectSimulator(file);
      } catch {
        // A recycled pid or a wedged process: start our own (its lock check refuses if the old one still holds the dir).
      }
    }
  }
  mkdirSync(simDir, { recursive: true, mode: 0o700 });
  const log = openSync(join(simDir, 'simulator.log'), 'a', 0o600);
  const args = [...process.execArgv, process.argv[1]!, 'simulator', '--data-dir', simDir, '--host', host, '--json'];
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', 'pipe', log], env: process.env });
  closeSync(log);
  const ready = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    // A child that neither answers nor exits (wedged) must not hang the service's start for ever.
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      child.kill('SIGKILL');
      reject(
        new Error(`simulator not ready within ${SIMULATOR_START_MS / 1000} s; see ${join(simDir, 'simulator.log')}`),
      );
    }, SIMULATOR_START_MS);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`simulator exited (${code}) before it was ready; see ${join(simDir, 'simulator.log')}`));
    };
    child.once('exit', onExit);
    child.once('error', reject);
    lines.once('line', (line) => {
      clearTimeout(timer);
      child.off('exit', onExit);
      lines.close();
      resolve(line);
    });
  });
  // The child writes nothing more to stdout; dropping our end lets it outlive us (kill -9) without a broken pipe.
  child.stdout!.destroy();
  child.unref();
  const { endpointsFile } = JSON.parse(ready) as { endpointsFile: string };
  return connectSimulator(endpointsFile, { spawned: true });
}
