import type { AlertChannelRow } from '../store/repos/alerts.js';
import type { AlertMessage } from './message.js';

/** What one send gave: the shape of a webhook attempt's result (status, latency, a snippet of the answer). */
export interface SendResult {
  ok: boolean;
  /** The SMTP reply code or the Bot API's HTTP status; null when there was no answer. */
  status: number | null;
  latencyMs: number;
  snippet: string | null;
  error: string | null;
  /** The receiver's own wait before the next try (Telegram's retry_after), if it gave one. */
  retryAfterMs: number | null;
}

/** Sends one message through one channel of its kind. Never throws: a failure is a result. */
export interface ChannelSender {
  send(ch: AlertChannelRow, msg: AlertMessage): Promise<SendResult>;
}

const SNIPPET = 500;

/** A snippet with every secret it may echo replaced (a bot token appears in the Bot API's URL). */
export function scrub(text: string | null | undefined, secrets: Array<string | null | undefined>): string | null {
  if (text === null || text === undefined) return null;
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join('***');
  return out.length > SNIPPET ? `${out.slice(0, SNIPPET)}...` : out;
}

/** The masked form of a secret: its last 4 characters only (what lists and logs may show). */
export const maskSecret = (secret: string): string => `...${secret.slice(-4)}`;
