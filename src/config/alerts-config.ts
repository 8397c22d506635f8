import { readFileSync } from 'node:fs';
import { parseDuration } from './webhooks-config.js';

/** The operator's SMTP server, which sends every user's email alerts (docs/alerts.md). */
export interface SmtpConfig {
  host: string;
  port: number;
  /** TLS from the first byte (port 465); otherwise STARTTLS when the server offers it. */
  secure: boolean;
  user: string | null;
  /** Read from COPYTRADE_SMTP_PASSWORD_FILE (or COPYTRADE_SMTP_PASSWORD), never from the command line. */
  password: string | null;
  from: string;
}

/** Built-in alerts (env COPYTRADE_ALERTS_*, COPYTRADE_SMTP_*, COPYTRADE_TELEGRAM_API_URL; see docs/alerts.md). */
export interface AlertsConfig {
  /** null: the operator set no SMTP server (email channels fail their sends, or reach the demo's inbox). */
  smtp: SmtpConfig | null;
  /** The Bot API's base URL; null = https://api.telegram.org (in demo mode: the demo's inbox). */
  telegramApiUrl: string | null;
  /** At most one message per channel per window. */
  windowMs: number;
  /** How long a first event waits for the ones that follow it, so a burst starts as one message. */
  gatherMs: number;
  /** Delay before each retry of a failed message; once all are used, the message is given up. */
  retryScheduleMs: number[];
  timeoutMs: number;
  /** The safety-net scan (events appended by another process, due windows). */
  pollMs: number;
}

export const TELEGRAM_API_URL = 'https://api.telegram.org';

const dur = (v: string | undefined, name: string, dflt: string) =>
  parseDuration(v === undefined || v === '' ? dflt : v, name);

function smtpPassword(env: NodeJS.ProcessEnv): string | null {
  const file = env.COPYTRADE_SMTP_PASSWORD_FILE;
  if (file) {
    try {
      return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      throw new Error(`COPYTRADE_SMTP_PASSWORD_FILE cannot be read: ${(err as Error).message}`);
    }
  }
  return env.COPYTRADE_SMTP_PASSWORD || null;
}

function loadSmtp(env: NodeJS.ProcessEnv): SmtpConfig | null {
  const host = env.COPYTRADE_SMTP_HOST;
  if (!host) return null;
  const port = Number(env.COPYTRADE_SMTP_PORT || '587');
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`COPYTRADE_SMTP_PORT must be a port number, got ${JSON.stringify(env.COPYTRADE_SMTP_PORT)}`);
  const secure = env.COPYTRADE_SMTP_SECURE ? ['1', 'true'].includes(env.COPYTRADE_SMTP_SECURE) : port === 465;
  const from = env.COPYTRADE_SMTP_FROM;
  if (!from) throw new Error("COPYTRADE_SMTP_FROM must be set with COPYTRADE_SMTP_HOST (the alerts' sender address)");
  return { host, port, secure, user: env.COPYTRADE_SMTP_USER || null, password: smtpPassword(env), from };
}

export function loadAlertsConfig(env: NodeJS.ProcessEnv): AlertsConfig {
  return {
    smtp: loadSmtp(env),
    telegramApiUrl: env.COPYTRADE_TELEGRAM_API_URL || null,
    windowMs: dur(env.COPYTRADE_ALERTS_WINDOW, 'COPYTRADE_ALERTS_WINDOW', '60s'),
    gatherMs: dur(env.COPYTRADE_ALERTS_GATHER, 'COPYTRADE_ALERTS_GATHER', '5s'),
    retryScheduleMs: (env.COPYTRADE_ALERTS_RETRY_SCHEDULE || '30s,2m,10m,30m')
      .split(',')
      .map((s) => parseDuration(s, 'COPYTRADE_ALERTS_RETRY_SCHEDULE')),
    timeoutMs: dur(env.COPYTRADE_ALERTS_TIMEOUT, 'COPYTRADE_ALERTS_TIMEOUT', '15s'),
    pollMs: dur(env.COPYTRADE_ALERTS_POLL, 'COPYTRADE_ALERTS_POLL', '5s'),
  };
}
