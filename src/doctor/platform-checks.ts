import type { PlatformEndpoints } from '../platforms/endpoints.js';
import { type CheckResult, fail, ok, type SeenDate, warn } from './check.js';
import { probeHttp, probeSocket } from './probes.js';

/** What the platform checks need to know besides the endpoints. */
export interface PlatformCheckContext {
  endpoints: PlatformEndpoints;
  /** `simulator` when the endpoints are a running simulator's (demo): a fix then names the simulator, not a setting. */
  source: 'settings' | 'simulator';
  demo: boolean;
  publicUrl: string | undefined;
  timeoutMs: number;
  now: () => number;
  /** Where each reached host's Date header goes, for the clock check. */
  dates: SeenDate[];
}

const from = (c: PlatformCheckContext, setting: string) => (c.source === 'simulator' ? "the simulator's" : setting);

const SIM_FIX = 'restart the simulator (`copytrade simulator`, or `copytrade serve --demo` starts one)';

/** One line for one HTTP(S) host: reached (status, time, TLS) or why not. Its Date header is kept for the clock check. */
async function httpHost(c: PlatformCheckContext, check: string, url: string, setting: string): Promise<CheckResult> {
  try {
    new URL(url);
  } catch {
    return fail(check, `${JSON.stringify(url)} is not a URL`, `set ${setting} to the host's URL`);
  }
  const r = await probeHttp(url, { timeoutMs: c.timeoutMs });
  if (!r.ok) return fail(check, `${url}: ${r.reason}`, c.source === 'simulator' ? SIM_FIX : hostFix(setting, r.tls));
  if (r.date) c.dates.push({ host: new URL(url).host, date: r.date, at: c.now() });
  const tls = url.startsWith('https:') ? ', TLS valid' : '';
  return ok(check, `${url} answered HTTP ${r.status} in ${r.ms} ms${tls}`);
}

const hostFix = (setting: string, tls: boolean) =>
  tls
    ? `the host's certificate does not validate: check ${setting} names the right host, and the system CA store`
    : `check ${setting} and that this machine can reach it (DNS, firewall, proxy)`;

async function socketHost(
  c: PlatformCheckContext,
  check: string,
  ep: { host: string; port: number; ca?: string },
  setting: string,
): Promise<CheckResult> {
  const r = await probeSocket(ep.host, ep.port, { tls: true, timeoutMs: c.timeoutMs, ...(ep.ca ? { ca: ep.ca } : {}) });
  const where = `${ep.host}:${ep.port}`;
  if (!r.ok) return fail(check, `${where}: ${r.reason}`, c.source === 'simulator' ? SIM_FIX : hostFix(setting, r.tls));
  return ok(check, `${where} accepted a TLS connection in ${r.ms} ms, certificate valid`);
}

function platformA(c: PlatformCheckContext): Array<Promise<CheckResult>> {
  const a = c.endpoints.platforma;
  const checks = [
    Promise.resolve(
      a.token
        ? ok('platforma.credentials', `the API token is set (${from(c, 'COPYTRADE_PLATFORMA_TOKEN')})`)
        : fail(
            'platforma.credentials',
            'no API token: connecting a platform A account will fail',
            'set COPYTRADE_PLATFORMA_TOKEN (the MetaApi API token of our application)',
          ),
    ),
    httpHost(c, 'platforma.host', a.baseUrl, 'COPYTRADE_PLATFORMA_URL'),
  ];
  if (a.clientApiUrl)
    checks.push(httpHost(c, 'platforma.client-api', a.clientApiUrl, 'COPYTRADE_PLATFORMA_CLIENT_API_URL'));
  return checks;
}

function platformB(c: PlatformCheckContext): Array<Promise<CheckResult>> {
  const b = c.endpoints.platformb;
  return [
    Promise.resolve(
      ok('platformb.credentials', 'no application credentials needed (each account signs in with its own)'),
    ),
    httpHost(c, 'platformb.demo', b.baseUrl('demo'), 'COPYTRADE_PLATFORMB_DEMO_URL'),
    httpHost(c, 'platformb.live', b.baseUrl('live'), 'COPYTRADE_PLATFORMB_LIVE_URL'),
  ];
}

function platformC(c: PlatformCheckContext): Array<Promise<CheckResult>> {
  const p = c.endpoints.platformc;
  const missing = [
    ...(p.clientId ? [] : ['COPYTRADE_PLATFORMC_CLIENT_ID']),
    ...(p.clientSecret ? [] : ['COPYTRADE_PLATFORMC_CLIENT_SECRET']),
  ];
  return [
    Promise.resolve(
      missing.length === 0
        ? ok(
            'platformc.credentials',
            `the Open API application's client id and secret are set (${from(c, 'COPYTRADE_PLATFORMC_CLIENT_ID/_SECRET')})`,
          )
        : fail(
            'platformc.credentials',
            `${missing.join(' and ')} not set: the platform C connection wizard refuses to start`,
            `set ${missing.join(' and ')} (the application's credentials at openapi.ctrader.com)`,
          ),
    ),
    httpHost(c, 'platformc.oauth', p.oauthBaseUrl, 'COPYTRADE_PLATFORMC_OAUTH_URL'),
    socketHost(c, 'platformc.demo', p.endpoint('demo'), 'COPYTRADE_PLATFORMC_DEMO_HOST / COPYTRADE_PLATFORMC_PORT'),
    socketHost(c, 'platformc.live', p.endpoint('live'), 'COPYTRADE_PLATFORMC_LIVE_HOST / COPYTRADE_PLATFORMC_PORT'),
    redirect(c),
  ];
}

const CALLBACK = '/api/connect/platformc/callback';

/** The OAuth redirect goes to COPYTRADE_PUBLIC_URL: it must be set (outside demo) and answer from outside. */
async function redirect(c: PlatformCheckContext): Promise<CheckResult> {
  const check = 'platformc.redirect';
  const fix = 'set COPYTRADE_PUBLIC_URL to the https address users open the dashboard at';
  if (!c.publicUrl)
    return c.demo
      ? ok(check, 'COPYTRADE_PUBLIC_URL not set: in demo mode the callback goes to the address the browser used')
      : fail(check, `COPYTRADE_PUBLIC_URL is not set: the OAuth redirect (${CALLBACK}) has no address`, fix);
  let url: URL;
  try {
    url = new URL(c.publicUrl);
  } catch {
    return fail(check, `COPYTRADE_PUBLIC_URL ${JSON.stringify(c.publicUrl)} is not a URL`, fix);
  }
  const callback = `${c.publicUrl.replace(/\/$/, '')}${CALLBACK}`;
  const r = await probeHttp(new URL('/healthz', url).toString(), { timeoutMs: c.timeoutMs });
  if (!r.ok)
    return r.tls
      ? fail(check, `${url.origin}: ${r.reason}`, 'install a certificate that validates for COPYTRADE_PUBLIC_URL')
      : warn(
          check,
          `${url.origin}: ${r.reason} (is the service running behind it?)`,
          `start the service, or correct COPYTRADE_PUBLIC_URL; register ${callback} as the app's redirect URI`,
        );
  return ok(check, `${url.origin} answered HTTP ${r.status}; the redirect URI to register is ${callback}`);
}

export type PlatformName = 'platforma' | 'platformb' | 'platformc';
export const PLATFORM_NAMES: readonly PlatformName[] = ['platforma', 'platformb', 'platformc'];

/** Every check of the chosen platforms, started at once (each bounded by the timeout). */
export function platformChecks(c: PlatformCheckContext, which: readonly PlatformName[]): Array<Promise<CheckResult>> {
  const by = { platforma: platformA, platformb: platformB, platformc: platformC };
  return which.flatMap((p) => by[p](c));
}

/** Our clock against the Date headers of the hosts that answered (1 s resolution, so under 5 s is noise). */
export function clockCheck(dates: SeenDate[]): CheckResult {
  const fix = 'synchronise the system clock (NTP: timedatectl set-ntp true); tokens and sessions expire by it';
  if (dates.length === 0)
    return warn('clock', 'no host answered with a Date header: the clock could not be compared', fix);
  const skews = dates
    .map((d) => ({ host: d.host, skew: (d.at - Date.parse(d.date)) / 1000 }))
    .filter((d) => Number.isFinite(d.skew));
  if (skews.length === 0) return warn('clock', 'no Date header could be read', fix);
  const worst = skews.reduce((a, b) => (Math.abs(b.skew) > Math.abs(a.skew) ? b : a));
  const words = `${Math.abs(worst.skew).toFixed(0)} s ${worst.skew >= 0 ? 'ahead of' : 'behind'} ${worst.host}`;
  if (Math.abs(worst.skew) > 30) return fail('clock', `this machine's clock is ${words}`, fix);
  if (Math.abs(worst.skew) > 5) return warn('clock', `this machine's clock is ${words}`, fix);
  return ok('clock', `within ${Math.ceil(Math.abs(worst.skew))} s of ${skews.length} host(s)`);
}
