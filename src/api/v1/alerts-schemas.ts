import { Type } from 'typebox';
import type { AlertChannelRow, AlertDeliveryRow } from '../../store/repos/alerts.js';
import { OPEN } from '../schemas.js';

const NStr = Type.Union([Type.String(), Type.Null()]);
const Kind = Type.Union([Type.Literal('email'), Type.Literal('telegram')], {
  description: "email: through the operator's SMTP server; telegram: the Bot API sendMessage with your bot",
});

export const ChannelSchema = Type.Object(
  {
    id: Type.String(),
    kind: Kind,
    name: NStr,
    email: Type.Union([Type.String(), Type.Null()], { description: 'email channels: the address alerts go to' }),
    chatId: Type.Union([Type.String(), Type.Null()], { description: 'telegram channels: the chat alerts go to' }),
    botTokenMasked: Type.Union([Type.String(), Type.Null()], {
      description: 'telegram channels: the last 4 characters of the bot token (the token is never shown)',
    }),
    enabled: Type.Boolean(),
    failures: Type.Integer({ description: 'failed sends of the pending message in a row' }),
    nextAttemptAt: Type.Union([Type.String(), Type.Null()], { description: 'when a failed message is tried again' }),
    lastSentAt: Type.Union([Type.String(), Type.Null()], { description: 'the last message (the window starts here)' }),
    createdAt: Type.String(),
    updatedAt: Type.String(),
  },
  { ...OPEN, description: 'a notification channel for built-in alerts (docs/alerts.md)' },
);

const Name = Type.Union([Type.String({ maxLength: 100 }), Type.Null()]);
const Email = Type.String({ maxLength: 254, description: 'email channels: where alerts go' });
const BotToken = Type.String({
  maxLength: 200,
  description: 'telegram channels: the token BotFather gave (sealed at rest)',
});
const ChatId = Type.String({ maxLength: 64, description: 'telegram channels: the chat id (docs/alerts.md)' });

export const CreateBody = Type.Object(
  {
    kind: Kind,
    name: Type.Optional(Name),
    email: Type.Optional(Email),
    botToken: Type.Optional(BotToken),
    chatId: Type.Optional(ChatId),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const UpdateBody = Type.Object(
  {
    name: Type.Optional(Name),
    email: Type.Optional(Email),
    botToken: Type.Optional(BotToken),
    chatId: Type.Optional(ChatId),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const DeliverySchema = Type.Object(
  {
    id: Type.String(),
    channelId: Type.String(),
    attempt: Type.Integer({ description: '1.. for the scheduled sends of one message; 0 for a test' }),
    trigger: Type.Union([Type.Literal('scheduled'), Type.Literal('test')]),
    ok: Type.Boolean(),
    status: Type.Union([Type.Integer(), Type.Null()], {
      description: "the SMTP reply code or the Bot API's HTTP status; null when there was no answer",
    }),
    latencyMs: Type.Union([Type.Integer(), Type.Null()]),
    responseSnippet: NStr,
    error: NStr,
    nextAttemptAt: NStr,
    eventCount: Type.Integer({
      description: "occurrences the message summarised (a group's panic-close, one event per account, counts once)",
    }),
    firstEventId: NStr,
    subject: Type.String(),
    createdAt: Type.String(),
  },
  OPEN,
);

export const RuleSchema = Type.Object(
  {
    kind: Type.String({
      description:
        'account_disconnected, copy_rejected, risk_triggered, panic_close_started, panic_close_finished, slo_breached',
    }),
    enabled: Type.Boolean(),
    description: Type.String(),
  },
  OPEN,
);

export const RulesBody = Type.Object(
  {
    rules: Type.Array(
      Type.Object(
        {
          kind: Type.String({ minLength: 1, maxLength: 64, description: 'a kind of GET /v1/alert-rules' }),
          enabled: Type.Boolean(),
        },
        {
          additionalProperties: false,
        },
      ),
      { maxItems: 50, description: 'kinds to change; an empty list changes nothing' },
    ),
  },
  { additionalProperties: false },
);

export const ChannelParams = Type.Object({ channel_id: Type.String({ minLength: 1, maxLength: 64 }) });

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const toChannelJson = (c: AlertChannelRow) => ({
  id: c.id,
  kind: c.kind as 'email' | 'telegram',
  name: c.name,
  email: c.emailTo,
  chatId: c.telegramChatId,
  botTokenMasked: c.secretHint,
  enabled: c.enabled,
  failures: c.failures,
  nextAttemptAt: iso(c.nextAttemptAt),
  lastSentAt: iso(c.lastSentAt),
  createdAt: c.createdAt.toISOString(),
  updatedAt: c.updatedAt.toISOString(),
});

export const toDeliveryJson = (d: AlertDeliveryRow) => ({
  id: d.id,
  channelId: d.channelId,
  attempt: d.attempt,
  trigger: d.attempt === 0 ? ('test' as const) : ('scheduled' as const),
  ok: d.ok,
  status: d.status,
  latencyMs: d.latencyMs,
  responseSnippet: d.responseSnippet,
  error: d.error,
  nextAttemptAt: iso(d.nextAttemptAt),
  eventCount: d.eventCount,
  firstEventId: d.firstEventId,
  subject: d.subject,
  createdAt: d.createdAt.toISOString(),
});
