import { createTransport, type Transporter } from 'nodemailer';
import type { SmtpConfig } from '../config/alerts-config.js';
import type { AlertChannelRow } from '../store/repos/alerts.js';
import type { AlertMessage } from './message.js';
import { scrub, type ChannelSender, type SendResult } from './send-result.js';

/** The first digits of an SMTP reply ("250 2.0.0 Ok: queued"), the status an attempt records. */
const replyCode = (text: string | undefined): number | null => {
  const m = /^([2-5][0-9]{2})\b/.exec(text ?? '');
  return m ? Number(m[1]) : null;
};

/** Email through the operator's SMTP server (nodemailer), one connection per message. */
export class EmailSender implements ChannelSender {
  private readonly transport: Transporter | null;

  constructor(
    private readonly smtp: SmtpConfig | null,
    timeoutMs: number,
  ) {
    this.transport = smtp
      ? createTransport({
          host: smtp.host,
          port: smtp.port,
          secure: smtp.secure,
          ...(smtp.user ? { auth: { user: smtp.user, pass: smtp.password ?? '' } } : {}),
          connectionTimeout: timeoutMs,
          greetingTimeout: timeoutMs,
          socketTimeout: timeoutMs,
          // The server's own words go to the attempt row, not to a log line.
          logger: false,
        })
      : null;
  }

  send(ch: AlertChannelRow, msg: AlertMessage): Promise<SendResult> {
    return this.sendTo(ch.emailTo ?? '', msg);
  }

  /** One message to one address (a channel's, or a sign-up's verification email: docs/people.md). */
  async sendTo(to: string, msg: AlertMessage): Promise<SendResult> {
    const started = Date.now();
    if (!this.transport || !this.smtp)
      return {
        ok: false,
        status: null,
        latencyMs: 0,
        snippet: null,
        error: 'the operator has not set an SMTP server (COPYTRADE_SMTP_HOST, docs/alerts.md)',
        retryAfterMs: null,
      };
    const secrets = [this.smtp.password];
    try {
      const info = (await this.transport.sendMail({
        from: this.smtp.from,
        to,
        subject: msg.subject,
        text: msg.text,
      })) as { response?: string; rejected?: unknown[] };
      const rejected = (info.rejected ?? []).length > 0;
      return {
        ok: !rejected,
        status: replyCode(info.response),
        latencyMs: Date.now() - started,
        snippet: scrub(info.response, secrets),
        error: rejected ? 'the SMTP server refused the recipient' : null,
        retryAfterMs: null,
      };
    } catch (err) {
      const e = err as Error & { responseCode?: number; response?: string };
      return {
        ok: false,
        status: e.responseCode ?? replyCode(e.response),
        latencyMs: Date.now() - started,
        snippet: scrub(e.response, secrets),
        error: scrub(`SMTP: ${e.message}`, secrets),
        retryAfterMs: null,
      };
    }
  }

  close(): void {
    this.transport?.close();
  }
}
