import type { CredentialBox } from '../auth/credential-box.js';
import { invalid, notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { TEST_ATTEMPT, type AlertChannelRow, type AlertDeliveryRow, type AlertsRepo } from '../store/repos/alerts.js';
import { ALERT_KINDS, enabledKinds } from './alert-kinds.js';
import { TEST_MESSAGE } from './message.js';
import { maskSecret, type ChannelSender } from './send-result.js';
import { BOT_TOKEN, CHAT_ID } from './telegram-sender.js';

export type ChannelKind = 'email' | 'telegram';

export interface ChannelInput {
  kind: ChannelKind;
  name?: string | null;
  email?: string;
  botToken?: string;
  chatId?: string;
  enabled?: boolean;
}

/** Most channels one user may have (each one sends its own messages). */
export const MAX_CHANNELS = 20;

/** An address as people type it: one @, a dot in the domain, no spaces or angle brackets (the SMTP server says the rest). */
const EMAIL =
  /^[^\s@<>(),;:"]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

function checkEmail(email: string | undefined): string {
  if (email === undefined || email === '') throw invalid('email is required for an email channel');
  if (email.length > 254 || !EMAIL.test(email))
    throw invalid(`email ${JSON.stringify(email)} is not an email address (name@example.com)`, { field: 'email' });
  return email;
}

function checkChatId(chatId: string | undefined): string {
  if (chatId === undefined || chatId === '')
    throw invalid('chatId is required for a telegram channel (docs/alerts.md says how to find it)', {
      field: 'chatId',
    });
  if (!CHAT_ID.test(chatId))
    throw invalid('chatId must be a numeric chat id (negative for groups) or a channel @username', {
      field: 'chatId',
    });
  return chatId;
}

function checkToken(token: string | undefined): string {
  if (token === undefined || token === '')
    throw invalid('botToken is required for a telegram channel (BotFather gives it)', { field: 'botToken' });
  // The message never echoes the token.
  if (!BOT_TOKEN.test(token))
    throw invalid('botToken does not look like a Telegram bot token (digits, a colon, then 30 or more characters)', {
      field: 'botToken',
    });
  return token;
}

/**
 * Managing a user's alert channels and rules. A bot token is sealed at rest and shown only masked. Every lookup is
 * by (user, id): a foreign id is the same not-found as an unknown one.
 */
export class AlertChannelService {
  constructor(
    private readonly repo: AlertsRepo,
    private readonly box: CredentialBox,
    private readonly senders: Record<string, ChannelSender>,
    /** Told after a change, so the dispatcher looks again now (a re-enabled channel, rules turned on). */
    private readonly onChanged: () => void = () => undefined,
  ) {}

  async create(userId: string, input: ChannelInput): Promise<AlertChannelRow> {
    if ((await this.repo.count(userId)) >= MAX_CHANNELS)
      throw invalid(`a user may have at most ${MAX_CHANNELS} alert channels; remove one first`);
    const base = {
      id: newId('alc'),
      userId,
      kind: input.kind,
      name: input.name ?? null,
      enabled: input.enabled ?? true,
      // A new channel alerts on what happens from now on, not on the user's history.
      deliveredCursor: await this.repo.latestCursor(userId),
    };
    let row: AlertChannelRow;
    if (input.kind === 'email') {
      if (input.botToken !== undefined || input.chatId !== undefined)
        throw invalid('botToken and chatId belong to a telegram channel, not an email one');
      row = await this.repo.insert({ ...base, emailTo: checkEmail(input.email) });
    } else {
      if (input.email !== undefined) throw invalid('email belongs to an email channel, not a telegram one');
      const chatId = checkChatId(input.chatId);
      const token = checkToken(input.botToken);
      row = await this.repo.insert({ ...base, ...this.sealToken(token), telegramChatId: chatId });
    }
    this.onChanged();
    return row;
  }

  list(userId: string): Promise<AlertChannelRow[]> {
    return this.repo.list(userId);
  }

  async get(userId: string, id: string): Promise<AlertChannelRow> {
    const ch = await this.repo.owned(userId, id);
    if (!ch) throw notFound('alert channel');
    return ch;
  }

  /** A change to where it sends (or enabling it) clears a pending backoff: the next pass tries at once. */
  async update(userId: string, id: string, patch: Omit<Partial<ChannelInput>, 'kind'>): Promise<AlertChannelRow> {
    const ch = await this.get(userId, id);
    const set: Record<string, unknown> = { failures: 0, nextAttemptAt: null };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.enabled !== undefined) set.enabled = patch.enabled;
    if (ch.kind === 'email') {
      if (patch.botToken !== undefined || patch.chatId !== undefined)
        throw invalid('botToken and chatId belong to a telegram channel, not an email one');
      if (patch.email !== undefined) set.emailTo = checkEmail(patch.email);
    } else {
      if (patch.email !== undefined) throw invalid('email belongs to an email channel, not a telegram one');
      if (patch.chatId !== undefined) set.telegramChatId = checkChatId(patch.chatId);
      if (patch.botToken !== undefined) Object.assign(set, this.sealToken(checkToken(patch.botToken)));
    }
    const row = await this.repo.update(userId, id, set);
    if (!row) throw notFound('alert channel');
    this.onChanged();
    return row;
  }

  async remove(userId: string, id: string): Promise<void> {
    if (!(await this.repo.remove(userId, id))) throw notFound('alert channel');
  }

  /** One test message now (also through a disabled channel), recorded as attempt 0. */
  async sendTest(userId: string, id: string): Promise<AlertDeliveryRow> {
    const ch = await this.get(userId, id);
    const sender = this.senders[ch.kind];
    const r = sender
      ? await sender.send(ch, TEST_MESSAGE)
      : { ok: false, status: null, latencyMs: 0, snippet: null, error: `no sender for ${ch.kind}` };
    return this.repo.recordAttempt({
      channelId: ch.id,
      attempt: TEST_ATTEMPT,
      status: r.status,
      ok: r.ok,
      latencyMs: r.latencyMs,
      responseSnippet: r.snippet,
      error: r.error,
      nextAttemptAt: null,
      eventCount: 0,
      firstEventId: null,
      lastCursor: null,
      subject: TEST_MESSAGE.subject,
    });
  }

  async deliveries(userId: string, id: string, limit: number, before?: string): Promise<AlertDeliveryRow[]> {
    await this.get(userId, id);
    return this.repo.deliveries(id, limit, before);
  }

  async rules(userId: string): Promise<Array<{ kind: string; enabled: boolean; description: string }>> {
    const on = enabledKinds(await this.repo.rules(userId));
    return ALERT_KINDS.map((k) => ({ kind: k.kind, enabled: on.has(k.kind), description: k.description }));
  }

  async setRules(userId: string, rules: Array<{ kind: string; enabled: boolean }>) {
    const known = new Set(ALERT_KINDS.map((k) => k.kind));
    const unknown = rules.filter((r) => !known.has(r.kind)).map((r) => r.kind);
    if (unknown.length > 0)
      throw invalid(`unknown alert kind ${unknown.join(', ')}; known: ${[...known].join(', ')}`, { field: 'rules' });
    await this.repo.setRules(userId, rules);
    this.onChanged();
    return this.rules(userId);
  }

  private sealToken(token: string) {
    return { secretEnc: this.box.seal({ botToken: token }), secretHint: maskSecret(token) };
  }
}
