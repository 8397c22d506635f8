import type { AlertChannelRow } from '../store/repos/alerts.js';
import type { AlertMessage } from './message.js';
import type { ChannelSender, SendResult } from './send-result.js';

export interface InboxMessage {
  channelId: string;
  userId: string;
  kind: string;
  to: string;
  subject: string;
  text: string;
  at: string;
}

const KEPT = 50;

/**
 * DEMO ONLY. Stands in for the SMTP server and the Bot API when demo mode runs without them: a message "sent"
 * is kept in this process's memory (the last 50 per user, gone at restart) and the dashboard's Alerts page shows
 * it. Nothing leaves the machine. Never used outside demo mode.
 */
export class DemoInbox implements ChannelSender {
  private readonly byUser = new Map<string, InboxMessage[]>();

  async send(ch: AlertChannelRow, msg: AlertMessage): Promise<SendResult> {
    const list = this.byUser.get(ch.userId) ?? [];
    list.unshift({
      channelId: ch.id,
      userId: ch.userId,
      kind: ch.kind,
      to: ch.kind === 'email' ? (ch.emailTo ?? '') : `chat ${ch.telegramChatId ?? ''}`,
      subject: msg.subject,
      text: msg.text,
      at: new Date().toISOString(),
    });
    this.byUser.set(ch.userId, list.slice(0, KEPT));
    return {
      ok: true,
      status: 250,
      latencyMs: 0,
      snippet: 'kept in the demo inbox (demo only)',
      error: null,
      retryAfterMs: null,
    };
  }

  messages(userId: string): InboxMessage[] {
    return this.byUser.get(userId) ?? [];
  }
}
