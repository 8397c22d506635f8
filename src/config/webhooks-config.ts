/** Webhook delivery and event stream settings (env COPYTRADE_WEBHOOK_*; see docs/webhooks.md). */
export interface WebhookConfig {
  /**
   * Allow endpoint URLs that resolve to private, loopback or link-local addresses (tests, a single-user
   * deployment that delivers inside its own network). Off unless COPYTRADE_WEBHOOK_ALLOW_PRIVATE_TARGETS says so,
   * demo mode included: a user's webhook test would read the host's loopback services (issue 46). The demo's own
   * receiver is allowed by itself (webhooks/target-guard.ts, OwnReceivers).
   */
  allowPrivateTargets: boolean;
  timeoutMs: number;
  /** Delay before each attempt of one event: [0] is the first attempt; the last entry repeats. */
  retryScheduleMs: number[];
  /** Each delay is spread by up to +-jitter of itself, so failed endpoints do not retry in lockstep. */
  jitter: number;
  /** An endpoint failing without a success for this long is disabled. */
  failureWindowMs: number;
  /** How long the previous secret keeps signing after a rotation (default for the route). */
  secretOverlapSec: number;
  /** The deliverer's safety-net scan, for events appended by another process or timers lost to a crash. */
  pollMs: number;
  /** See EventFeed: how long a missing cursor may hold readers back. */
  gapGraceMs: number;
  /** Comment line sent on an idle event stream so proxies keep it open. */
  streamHeartbeatMs: number;
  /** Upper bound on a receiver's Retry-After. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_SCHEDULE = '0,5s,5m,30m,2h,5h,10h,14h,20h,24h';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "250ms", "5s", "5m", "2h", "5d", or a bare number of milliseconds. */
export function parseDuration(text: string, name: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!m) throw new Error(`${name} must be a duration like 250ms, 5s, 5m, 2h or 5d; got ${JSON.stringify(text)}`);
  return Math.round(Number(m[1]) * UNITS[m[2] ?? 'ms']!);
}

const dur = (v: string | undefined, name: string, dflt: string) =>
  parseDuration(v === undefined || v === '' ? dflt : v, name);

export function loadWebhookConfig(env: NodeJS.ProcessEnv): WebhookConfig {
  const allow = env.COPYTRADE_WEBHOOK_ALLOW_PRIVATE_TARGETS;
  const schedule = (env.COPYTRADE_WEBHOOK_RETRY_SCHEDULE || DEFAULT_RETRY_SCHEDULE)
    .split(',')
    .map((s) => parseDuration(s, 'COPYTRADE_WEBHOOK_RETRY_SCHEDULE'));
  const jitter = Number(env.COPYTRADE_WEBHOOK_JITTER ?? '0.2');
  if (!(jitter >= 0 && jitter < 1)) throw new Error('COPYTRADE_WEBHOOK_JITTER must be in [0, 1)');
  return {
    allowPrivateTargets: allow === '1' || allow === 'true',
    timeoutMs: dur(env.COPYTRADE_WEBHOOK_TIMEOUT, 'COPYTRADE_WEBHOOK_TIMEOUT', '15s'),
    retryScheduleMs: schedule,
    jitter,
    failureWindowMs: dur(env.COPYTRADE_WEBHOOK_FAILURE_WINDOW, 'COPYTRADE_WEBHOOK_FAILURE_WINDOW', '5d'),
    secretOverlapSec: Math.round(
      dur(env.COPYTRADE_WEBHOOK_SECRET_OVERLAP, 'COPYTRADE_WEBHOOK_SECRET_OVERLAP', '24h') / 1000,
    ),
    pollMs: dur(env.COPYTRADE_WEBHOOK_POLL, 'COPYTRADE_WEBHOOK_POLL', '5s'),
    gapGraceMs: dur(env.COPYTRADE_EVENTS_GAP_GRACE, 'COPYTRADE_EVENTS_GAP_GRACE', '10s'),
    streamHeartbeatMs: dur(env.COPYTRADE_EVENTS_HEARTBEAT, 'COPYTRADE_EVENTS_HEARTBEAT', '15s'),
    maxRetryAfterMs: dur(env.COPYTRADE_WEBHOOK_MAX_RETRY_AFTER, 'COPYTRADE_WEBHOOK_MAX_RETRY_AFTER', '24h'),
  };
}
