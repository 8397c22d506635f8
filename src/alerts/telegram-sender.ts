import type { CredentialBox } from '../auth/credential-box.js';
import type { AlertChannelRow } from '../store/repos/alerts.js';
import type { AlertMessage } from './message.js';
import { scrub, type ChannelSender, type SendResult } from './send-result.js';

export interface TelegramOptions {
  /** The Bot API's base URL: https://api.telegram.org, or a stub on loopback in tests. */
  baseUrl: string;
  timeoutMs: number;
}

/** Telegram's limit on a message's text. */
const MAX_TEXT = 4096;

/** A bot token as BotFather gives it: the bot's numeric id, a colon, and the secret part. */
export const BOT_TOKEN = /^[0-9]{3,15}:[A-Za-z0-9_-]{30,80}$/;
/** A chat id (a user or group, negative for groups) or a public channel's @username. */
export const CHAT_ID = /^(-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{4,31})$/;

/** The Bot API's sendMessage over HTTPS. The token is sealed in the store and opened only here, for the call. */
export class TelegramSender implements ChannelSender {
  constructor(
    private readonly box: CredentialBox,
    private readonly opts: TelegramOptions,
  ) {}

  async send(ch: AlertChannelRow, msg: AlertMessage): Promise<SendResult> {
    const started = Date.now();
    const fail = (error: string, status: number | null = null, snippet: string | null = null): SendResult => ({
      ok: false,
      status,
      latencyMs: Date.now() - started,
      snippet,
      error,
      retryAfterMs: null,
    });
    let token: string;
    try {
      token = this.box.open<{ botToken: string }>(ch.secretEnc ?? '').botToken;
    } catch (err) {
      return fail(`the bot token cannot be opened: ${(err as Error).message}`);
    }
    const text = `${msg.subject}\n\n${msg.text}`.slice(0, MAX_TEXT);
    const url = `${this.opts.baseUrl.replace(/\/+$/, '')}/bot${token}/sendMessage`;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ chat_id: ch.telegramChatId, text, disable_web_page_preview: true }),
        signal: AbortSignal.timeout(this.opts.timeoutMs),
        redirect: 'error',
      });
      const raw = await res.text();
      const snippet = scrub(raw, [token]);
      let body: { ok?: boolean; description?: string; parameters?: { retry_after?: number } } = {};
      try {
        body = JSON.parse(raw) as typeof body;
      } catch {
        // Not the Bot API's JSON (a proxy's page): the status and the snippet say what it was.
      }
      if (res.ok && body.ok === true)
        return {
          ok: true,
          status: res.status,
          latencyMs: Date.now() - started,
          snippet,
          error: null,
          retryAfterMs: null,
        };
      const retry = body.parameters?.retry_after;
      return {
        ...fail(
          scrub(`Telegram answered ${res.status}: ${body.description ?? 'no description'}`, [token])!,
          res.status,
          snippet,
        ),
        retryAfterMs: typeof retry === 'number' ? retry * 1000 : null,
      };
    } catch (err) {
      const e = err as Error & { cause?: { message?: string } };
      const why =
        e.name === 'TimeoutError' ? `no answer within ${this.opts.timeoutMs} ms` : (e.cause?.message ?? e.message);
      return fail(scrub(`the Bot API could not be reached: ${why}`, [token])!);
    }
  }
}
