import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/config.js';
import { packageRoot } from '../config/package-root.js';
import type { SimulatorEndpoints } from '../demo/simulator-process.js';
import { type PlatformEndpoints, realEndpoints } from '../platforms/endpoints.js';
import { type CheckResult, fail, ok, type SeenDate } from './check.js';
import { dataDirCheck, keyCheck, natsCheck, postgresCheck } from './local-checks.js';
import { clockCheck, PLATFORM_NAMES, type PlatformName, platformChecks } from './platform-checks.js';
import { probeHttp } from './probes.js';

export interface DoctorOptions {
  cfg: Config;
  env?: NodeJS.ProcessEnv;
  /** Demo mode: `auto` (the data dir's simulator), an endpoints file of `copytrade simulator`, or `in-process`. */
  simulator?: string;
  /** The platforms to check (default all three). */
  platforms?: readonly PlatformName[];
  /** Bound of each network check (default 3 s). */
  timeoutMs?: number;
  /** The clock compared with the hosts' Date headers (tests inject a skewed one). */
  now?: () => number;
  /** Endpoints to check instead of the settings' (tests). */
  endpoints?: PlatformEndpoints;
}

const DEFAULT_TIMEOUT_MS = 3000;

/** The simulator's endpoints as the service would use them in demo mode, or a failed check saying why not. */
async function simulatorEndpoints(
  cfg: Config,
  where: string,
  timeoutMs: number,
): Promise<{ endpoints: PlatformEndpoints; check: CheckResult } | { check: CheckResult }> {
  // Loaded only in demo mode: the simulator's module carries the whole simulated market.
  const { ENDPOINTS_FILE } = await import('../demo/simulator-process.js');
  const file = where === 'auto' ? join(cfg.dataDir, 'simulator', ENDPOINTS_FILE) : where;
  const fix = 'start the demo brokers: `copytrade serve --demo` (starts them) or `copytrade simulator`';
  if (!existsSync(file)) return { check: fail('simulator', `no simulator endpoints file at ${file}`, fix) };
  let e: SimulatorEndpoints;
  let ca: string;
  try {
    e = JSON.parse(readFileSync(file, 'utf8')) as SimulatorEndpoints;
    ca = readFileSync(e.platformc.caFile, 'utf8');
  } catch (err) {
    return { check: fail('simulator', `${file} is unreadable: ${(err as Error).message}`, fix) };
  }
  const health = await probeHttp(`${e.control.url}/health`, { timeoutMs });
  const check = health.ok
    ? ok('simulator', `simulator process ${e.pid} answers (${file})`)
    : fail('simulator', `simulator process ${e.pid} of ${file}: ${health.reason}`, fix);
  const c = e.platformc;
  const endpoints: PlatformEndpoints = {
    platformb: { baseUrl: (env) => (env === 'live' ? e.platformb.liveUrl : e.platformb.demoUrl) },
    platformc: {
      endpoint: (env) => ({ ...c[env], ca }),
      oauthBaseUrl: c.oauthBaseUrl,
      clientId: c.clientId,
      clientSecret: c.clientSecret,
    },
    platforma: { baseUrl: e.platforma.baseUrl, token: e.platforma.token },
    platformd: {
      baseUrl: (_server, env) => (env === 'live' ? (e.platformd?.liveUrl ?? '') : (e.platformd?.demoUrl ?? '')),
    },
  };
  return { endpoints, check };
}

/** A check that has not settled by then is a failure of its own: the doctor never hangs. */
function bounded(p: Promise<CheckResult>, ms: number, what: string): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(
      () => resolve(fail(what, `no answer within ${ms} ms`, 'see the other lines; run the doctor again')),
      ms,
    );
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * Every check `copytrade doctor` runs, all at once, each bounded: the platforms the service connects to
 * (credentials, hosts, TLS, the OAuth redirect's public URL), the clock, the store, NATS, the credential key.
 */
export async function runDoctor(o: DoctorOptions): Promise<CheckResult[]> {
  const { cfg } = o;
  const env = o.env ?? process.env;
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const dates: SeenDate[] = [];
  const head: CheckResult[] = [];
  let endpoints = o.endpoints ?? null;
  let source: 'settings' | 'simulator' = 'settings';
  const platforms = o.platforms ?? PLATFORM_NAMES;
  if (!endpoints && cfg.demo) {
    if (o.simulator === 'in-process') {
      head.push(ok('simulator', 'in-process demo brokers start with the service: no platform host to check'));
    } else {
      const sim = await simulatorEndpoints(cfg, o.simulator ?? 'auto', timeoutMs);
      head.push(sim.check);
      if ('endpoints' in sim) {
        endpoints = sim.endpoints;
        source = 'simulator';
      }
    }
  } else if (!endpoints) endpoints = realEndpoints();
  const pending: Array<Promise<CheckResult>> = [];
  if (endpoints) {
    const ctx = {
      endpoints,
      source,
      demo: cfg.demo,
      publicUrl: env.COPYTRADE_PUBLIC_URL || undefined,
      timeoutMs,
      now: o.now ?? Date.now,
      dates,
    };
    pending.push(...platformChecks(ctx, platforms));
  }
  pending.push(
    cfg.databaseUrl
      ? postgresCheck(cfg, join(packageRoot(), 'src', 'store', 'migrations'), timeoutMs)
      : Promise.resolve(dataDirCheck(cfg)),
    Promise.resolve(keyCheck(cfg)),
  );
  const nats = natsCheck(cfg, timeoutMs);
  const results = await Promise.all(pending.map((p) => bounded(p, timeoutMs * 3, 'check')));
  const out = [...head, ...results, ...(await nats)];
  // After the hosts: their Date headers are the reference.
  if (endpoints && platforms.length > 0) out.push(clockCheck(dates));
  return out;
}
