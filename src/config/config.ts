import { isIP } from 'node:net';
import { loadSignUpConfig, type SignUpConfig } from './sign-up-config.js';
import { dirname, join, resolve } from 'node:path';
import type { SignInLimits } from '../auth/sign-in-throttle.js';
import { loadWebhookConfig, type WebhookConfig } from './webhooks-config.js';
import { loadQuotaConfig, type QuotaConfig } from './quotas-config.js';
import { loadAlertsConfig, type AlertsConfig } from './alerts-config.js';

export interface Config {
  host: string;
  port: number;
  /** When set, family V is served on its own port; otherwise both families share `port`. */
  v1Port: number | null;
  dataDir: string;
  databaseUrl: string | undefined;
  demo: boolean;
  /** Demo mode's self-hosted MetaTrader account, its simulated EA dialling the bridge (COPYTRADE_DEMO_BRIDGE=0: none). */
  demoBridge: boolean;
  secretKey: string | undefined;
  /** Keys still accepted while a rotation with COPYTRADE_SECRET_KEY runs (comma-separated, base64). */
  secretKeyPrevious: string | undefined;
  /** The credential key file when COPYTRADE_SECRET_KEY is not set (default <data dir>/secret.key); null for :memory:. */
  secretKeyFile: string | null;
  /**
   * The Ed25519 key that signs the receipts' day heads (COPYTRADE_RECEIPT_KEY_FILE; default receipt.key beside the
   * credential key file; null for :memory:, a key per process). Created on first use, mode 0600 (docs/receipts.md).
   */
  receiptKeyFile: string | null;
  /** How often the sealer appends receipts for ended ledger rows (COPYTRADE_RECEIPT_SEAL_MS; 0 = never). */
  receiptSealMs: number;
  /** How often the service-level targets are evaluated (COPYTRADE_SLO_EVALUATE_MS; 0 = never; docs/slo.md). */
  sloEvaluateMs: number;
  accessTokenTtlSec: number;
  apiKeyOverlapSec: number;
  logLevel: string;
  /** Timeout of a broker write before it counts as unresolved. */
  brokerTimeoutMs: number;
  /** How often every account's broker is read for health and funds (0 = never). */
  healthIntervalMs: number;
  /** NATS server for cross-process signals (e.g. nats://127.0.0.1:4222); unset = in-process only. */
  natsUrl: string | undefined;
  /** Circuit breaker: most actions a Master may produce per minute before copying from it pauses (0 = off). */
  masterMaxActionsPerMin: number;
  /**
   * On PostgreSQL, how old (ms) a read of a copier group's Slaves may be for a watcher's copy to plan on it without
   * reading it again (its record is checked against the group's version); 0 = every copy reads it first.
   */
  heldSlavesMaxAgeMs: number;
  webhooks: WebhookConfig;
  /** Built-in alerts: SMTP, the Bot API, windows and retries (docs/alerts.md). */
  alerts: AlertsConfig;
  /** Self-service sign-up with email verification (COPYTRADE_SIGN_UP, off by default; docs/people.md). */
  signUp: SignUpConfig;
  quotas: QuotaConfig;
  /** Family V rate limits per API key (per user on the dashboard): requests per window; 0 = not limited. */
  v1Limits: { writes: number; reads: number; windowSec: number };
  /** Sign-in throttling: failures allowed before each next try must wait a growing delay. */
  signIn: SignInLimits;
  /** When set, GET /metrics asks for `Authorization: Bearer <this>`; unset, it is open like /healthz. */
  metricsToken: string | undefined;
  /**
   * The reverse proxies whose X-Forwarded-For is believed (addresses, CIDR ranges, or loopback, linklocal,
   * uniquelocal); empty = none, the client address is the TCP peer's (COPYTRADE_TRUST_PROXY).
   */
  trustProxy: string[];
  /** Platform C's connections per endpoint: a new one past this many accounts each, at most `maxConnections`. */
  ctraderPool: { accountsPerConnection: number; maxConnections: number };
}

const int = (v: string | undefined, name: string, dflt: number): number => {
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(v)}`);
  return n;
};

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** COPYTRADE_TRUST_PROXY: a comma-separated list; a wrong entry stops the start rather than trusting too much. */
export function parseTrustProxy(v: string | undefined): string[] {
  const entries = (v ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  for (const e of entries) {
    const [addr, bits, ...rest] = e.split('/');
    const family = isIP(addr ?? '');
    const okBits =
      bits === undefined || (/^[0-9]{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32) && family !== 0);
    if (!(PROXY_NAMES.has(e) || (family !== 0 && okBits && rest.length === 0)))
      throw new Error(
        `COPYTRADE_TRUST_PROXY: ${JSON.stringify(e)} is not an address, a CIDR range, loopback, linklocal or uniquelocal`,
      );
  }
  return entries;
}

export const DEFAULT_DATA_DIR = './.copytrade';

/** COPYTRADE_RECEIPT_KEY_FILE, else `receipt.key` in the credential key file's folder (the data dir by default). */
function receiptKeyFile(secretKeyFile: string | undefined, dataDir: string, env: NodeJS.ProcessEnv): string | null {
  if (env.COPYTRADE_RECEIPT_KEY_FILE) return resolve(env.COPYTRADE_RECEIPT_KEY_FILE);
  if (secretKeyFile) return join(dirname(resolve(secretKeyFile)), 'receipt.key');
  return dataDir === ':memory:' ? null : join(resolve(dataDir), 'receipt.key');
}

/** Flags win over environment variables, which win over defaults. */
export function loadConfig(
  flags: {
    host?: string;
    port?: string;
    v1Port?: string;
    dataDir?: string;
    demo?: boolean;
    secretKeyFile?: string;
  } = {},
  env = process.env,
): Config {
  const port = int(flags.port ?? env.PORT, 'port', 8080);
  if (port > 65535) throw new Error(`port must be at most 65535, got ${port}`);
  const v1 = flags.v1Port ?? env.COPYTRADE_V1_PORT;
  const dataDir = flags.dataDir ?? env.COPYTRADE_DATA_DIR ?? DEFAULT_DATA_DIR;
  return {
    host: flags.host ?? env.HOST ?? '127.0.0.1',
    port,
    v1Port: v1 ? int(v1, 'v1-port', 0) : null,
    dataDir: dataDir === ':memory:' ? dataDir : resolve(dataDir),
    databaseUrl: env.DATABASE_URL || undefined,
    demo: flags.demo ?? env.COPYTRADE_DEMO === '1',
    demoBridge: env.COPYTRADE_DEMO_BRIDGE !== '0',
    secretKey: env.COPYTRADE_SECRET_KEY || undefined,
    secretKeyPrevious: env.COPYTRADE_SECRET_KEY_PREVIOUS || undefined,
    secretKeyFile: (() => {
      const f = flags.secretKeyFile ?? env.COPYTRADE_SECRET_KEY_FILE;
      return f ? resolve(f) : dataDir === ':memory:' ? null : join(resolve(dataDir), 'secret.key');
    })(),
    receiptKeyFile: receiptKeyFile(flags.secretKeyFile ?? env.COPYTRADE_SECRET_KEY_FILE, dataDir, env),
    receiptSealMs: int(env.COPYTRADE_RECEIPT_SEAL_MS, 'COPYTRADE_RECEIPT_SEAL_MS', 10_000),
    sloEvaluateMs: int(env.COPYTRADE_SLO_EVALUATE_MS, 'COPYTRADE_SLO_EVALUATE_MS', 15_000),
    accessTokenTtlSec: int(env.COPYTRADE_ACCESS_TOKEN_TTL_SEC, 'COPYTRADE_ACCESS_TOKEN_TTL_SEC', 12 * 3600),
    apiKeyOverlapSec: int(env.COPYTRADE_API_KEY_OVERLAP_SEC, 'COPYTRADE_API_KEY_OVERLAP_SEC', 24 * 3600),
    logLevel: env.LOG_LEVEL ?? 'info',
    brokerTimeoutMs: int(env.COPYTRADE_BROKER_TIMEOUT_MS, 'COPYTRADE_BROKER_TIMEOUT_MS', 5000),
    healthIntervalMs: int(env.COPYTRADE_HEALTH_INTERVAL_MS, 'COPYTRADE_HEALTH_INTERVAL_MS', 15_000),
    natsUrl: env.NATS_URL || undefined,
    masterMaxActionsPerMin: int(env.COPYTRADE_MASTER_MAX_ACTIONS_PER_MIN, 'COPYTRADE_MASTER_MAX_ACTIONS_PER_MIN', 60),
    heldSlavesMaxAgeMs: int(env.COPYTRADE_HELD_SLAVES_MAX_AGE_MS, 'COPYTRADE_HELD_SLAVES_MAX_AGE_MS', 1000),
    webhooks: loadWebhookConfig(env),
    alerts: loadAlertsConfig(env),
    signUp: loadSignUpConfig(env, loadAlertsConfig(env)),
    quotas: loadQuotaConfig(env),
    v1Limits: {
      writes: int(env.COPYTRADE_V1_WRITES_PER_WINDOW, 'COPYTRADE_V1_WRITES_PER_WINDOW', 60),
      reads: int(env.COPYTRADE_V1_READS_PER_WINDOW, 'COPYTRADE_V1_READS_PER_WINDOW', 600),
      windowSec: Math.max(1, int(env.COPYTRADE_V1_LIMIT_WINDOW_SEC, 'COPYTRADE_V1_LIMIT_WINDOW_SEC', 60)),
    },
    signIn: {
      accountFreeFailures: int(env.COPYTRADE_SIGN_IN_FREE_FAILURES, 'COPYTRADE_SIGN_IN_FREE_FAILURES', 5),
      addressFreeFailures: int(
        env.COPYTRADE_SIGN_IN_ADDRESS_FREE_FAILURES,
        'COPYTRADE_SIGN_IN_ADDRESS_FREE_FAILURES',
        100,
      ),
      baseDelayMs: int(env.COPYTRADE_SIGN_IN_BASE_DELAY_MS, 'COPYTRADE_SIGN_IN_BASE_DELAY_MS', 1000),
      maxDelayMs: int(env.COPYTRADE_SIGN_IN_MAX_DELAY_MS, 'COPYTRADE_SIGN_IN_MAX_DELAY_MS', 5 * 60_000),
      windowMs: int(env.COPYTRADE_SIGN_IN_WINDOW_SEC, 'COPYTRADE_SIGN_IN_WINDOW_SEC', 15 * 60) * 1000,
    },
    metricsToken: env.COPYTRADE_METRICS_TOKEN || undefined,
    trustProxy: parseTrustProxy(env.COPYTRADE_TRUST_PROXY),
    ctraderPool: {
      accountsPerConnection: Math.max(
        1,
        int(env.COPYTRADE_CTRADER_ACCOUNTS_PER_CONNECTION, 'COPYTRADE_CTRADER_ACCOUNTS_PER_CONNECTION', 12),
      ),
      maxConnections: Math.max(1, int(env.COPYTRADE_CTRADER_MAX_CONNECTIONS, 'COPYTRADE_CTRADER_MAX_CONNECTIONS', 4)),
    },
  };
}

/** A file beside the store, or null for the in-memory store. */
export const dataFile = (cfg: Pick<Config, 'dataDir'>, name: string): string | null =>
  cfg.dataDir === ':memory:' ? null : join(cfg.dataDir, name);
