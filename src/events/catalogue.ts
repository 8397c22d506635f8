import { Type, type TSchema } from 'typebox';

/**
 * The event catalogue: every event type the service emits, with the JSON schema of its `data` at each
 * schema version. The spec leaves event kinds and payloads open ("not shown"), so all of this is our choice
 * (docs/open-points.md). Payloads allow extra properties on purpose: a new optional field is not a breaking
 * change, so it does not bump `schemaVersion`; removing or retyping a field does.
 */

const OPEN = { 'x-open-point': true } as const;
const Str = Type.String();
const NStr = Type.Union([Type.String(), Type.Null()]);
/** Volumes and prices travel as decimal strings, never floats (the service never rounds through a double). */
const Dec = Type.String({ description: 'decimal as a string, e.g. "0.10"' });
const NDec = Type.Union([Dec, Type.Null()]);
const Role = Type.Union([Type.Literal('master'), Type.Literal('slave')]);
const obj = (props: Record<string, TSchema>, description: string) =>
  Type.Object(props, { additionalProperties: true, description });

const orderBase = { tradeId: Str, symbol: Str, side: Str, volume: Dec };
const orderFailed = (what: string) =>
  obj({ ...orderBase, requestId: Type.Optional(NStr), code: Str, message: Str }, what);
const copyBase = { tradeId: Str, intentId: Str, symbol: Str, side: Str, volume: Dec };
const copyFailed = (what: string) => obj({ ...copyBase, code: Str, message: Str }, what);
const Health = Type.Object(
  {
    state: Type.String({ description: 'ok, degraded or down' }),
    connected: Type.Boolean(),
    tradingAllowed: Type.Boolean(),
    inSync: Type.Boolean(),
    dataStale: Type.Boolean(),
    reconnectRequired: Type.Boolean(),
  },
  { additionalProperties: true },
);
const panicTotals = { closed: Type.Integer(), failed: Type.Integer(), remaining: Type.Integer() };
const NumOrGrade = Type.Union([Type.Number(), Type.String()], {
  description: 'ms, percent or points; a drift grade (ok, minor, major, critical) for metric drift',
});
const sloBase = {
  groupId: Str,
  metric: Type.String({ description: 'latency_p99, latency_p50, success, drift or slippage' }),
  value: Type.Union([NumOrGrade, Type.Null()]),
  target: Type.Union([NumOrGrade, Type.Null()]),
  detail: Str,
  windowMinutes: Type.Integer(),
};
const panicScope = { scope: Type.Union([Type.Literal('account'), Type.Literal('group')]), targetId: Str };

interface Entry {
  version: number;
  data: TSchema;
  description: string;
}

const entries = {
  'order.accepted': {
    version: 1,
    description: 'An order sent to a Master was accepted by its broker; copiedTo Slaves get a copy.',
    data: obj({ ...orderBase, copiedTo: Type.Integer(), positionId: NStr, fillPrice: NDec }, 'order accepted'),
  },
  'order.rejected': {
    version: 1,
    description: "The Master's broker refused the order; nothing was copied.",
    data: orderFailed('order rejected'),
  },
  'order.unresolved': {
    version: 1,
    description:
      "The Master's broker did not answer in time: the order may or may not exist; reconcile before retrying.",
    data: orderFailed('order outcome unknown'),
  },
  'copy.confirmed': {
    version: 1,
    description: "A Slave's broker confirmed its copy.",
    data: obj(
      {
        ...copyBase,
        positionId: NStr,
        orderId: NStr,
        fillPrice: NDec,
        filledVolume: NDec,
        slippage: Type.Union([Dec, Type.Null()], {
          description: 'positive = worse for the Slave than the Master fill',
        }),
      },
      'copy confirmed',
    ),
  },
  'copy.rejected': { version: 1, description: "A Slave's broker refused its copy.", data: copyFailed('copy rejected') },
  'copy.unresolved': {
    version: 1,
    description: "A Slave's copy timed out with unknown outcome; the reconciler settles it by its correlation tag.",
    data: copyFailed('copy outcome unknown'),
  },
  'copy.skipped': {
    version: 1,
    description: 'A Slave was not sent a copy (a copy rule or its state excluded it); reason is a code.',
    data: obj({ tradeId: Str, intentId: Str, symbol: Str, reason: Str, detail: Type.Optional(NStr) }, 'copy skipped'),
  },
  'copy.denied': {
    version: 1,
    description: "The service refused a Slave's copy before sending it (capabilities or risk rules).",
    data: copyFailed('copy denied'),
  },
  'position.opened': {
    version: 1,
    description: 'A position opened on a Master or a Slave.',
    data: obj(
      {
        role: Role,
        positionId: Str,
        symbol: Str,
        side: Str,
        volume: Dec,
        price: NDec,
        tradeId: Type.Optional(Str),
        intentId: Type.Optional(Str),
        masterPositionId: Type.Optional(NStr),
      },
      'position opened',
    ),
  },
  'position.modified': {
    version: 1,
    description: "A position's stop loss, take profit or volume changed.",
    data: obj(
      {
        role: Role,
        positionId: Str,
        symbol: Type.Optional(Str),
        stopLoss: Type.Optional(NDec),
        takeProfit: Type.Optional(NDec),
        volume: Type.Optional(Dec),
      },
      'position modified',
    ),
  },
  'position.closed': {
    version: 1,
    description: 'A position closed (fully), by the user, a copy, a stop, or a panic-close.',
    data: obj(
      {
        role: Role,
        positionId: Str,
        symbol: Str,
        side: Type.Optional(Str),
        volume: Type.Optional(Dec),
        price: Type.Optional(NDec),
        reason: Type.Optional(Str),
      },
      'position closed',
    ),
  },
  'account.health_changed': {
    version: 1,
    description: "An account's health changed (connection, trading allowed, in sync, stale data, reconnect required).",
    data: obj({ before: Health, after: Health, lastError: Type.Optional(NStr) }, 'health changed'),
  },
  'account.status_changed': {
    version: 1,
    description:
      "An account's copy/connection status changed (connected, paused, locked, disconnected, reconnect_required, disabled, unverified).",
    data: obj({ before: Str, after: Str, reason: Type.Optional(NStr) }, 'status changed'),
  },
  'risk.triggered': {
    version: 1,
    description: 'A risk rule fired (e.g. a drawdown limit) and acted.',
    data: obj({ rule: Str, detail: Type.Optional(NStr), action: Type.Optional(Str) }, 'risk rule fired'),
  },
  'panic_close.started': {
    version: 1,
    description: 'A panic-close of an account (or of each account of a group) started.',
    data: obj(panicScope, 'panic-close started'),
  },
  'panic_close.progress': {
    version: 1,
    description: 'A panic-close round finished with positions left; it retries.',
    data: obj({ ...panicScope, ...panicTotals }, 'panic-close progress'),
  },
  'panic_close.finished': {
    version: 1,
    description: 'A panic-close finished; remaining = 0 means flat.',
    data: obj({ ...panicScope, ...panicTotals }, 'panic-close finished'),
  },
  'reconcile.drift_found': {
    version: 1,
    description: 'The reconciler found a difference between Master, links and Slave positions.',
    data: obj(
      {
        kind: Str,
        detail: Type.Optional(NStr),
        masterPositionId: Type.Optional(NStr),
        slavePositionId: Type.Optional(NStr),
      },
      'drift found',
    ),
  },
  'reconcile.healed': {
    version: 1,
    description: 'The reconciler fixed a drift (closed an orphan, opened a missing copy, fixed a volume).',
    data: obj({ kind: Str, action: Str, detail: Type.Optional(NStr) }, 'drift healed'),
  },
  'webhook_endpoint.disabled': {
    version: 1,
    description: 'The service disabled a webhook endpoint (410 Gone, or failing for longer than the failure window).',
    data: obj({ endpointId: Str, url: Str, reason: Str, failingSince: NStr }, 'endpoint disabled'),
  },
  'webhook.test': {
    version: 1,
    description:
      'Sent on request to one endpoint to check it receives and verifies deliveries; never stored or streamed.',
    data: obj({ endpointId: Str, message: Str }, 'test event'),
  },
  'copy.loop_ignored': {
    version: 1,
    description:
      "A Master position or order carries the correlation tag of one of our own copies made from this Master's group (the same broker account connected twice, or a cycle of groups): it is not copied again.",
    data: obj(
      {
        kind: Type.Union([Type.Literal('position'), Type.Literal('order')]),
        itemId: Str,
        tag: Str,
        intentId: Str,
        tradeId: Str,
        groupId: NStr,
      },
      'copy loop ignored',
    ),
  },
  'account.circuit_breaker_tripped': {
    version: 1,
    description:
      'A Master produced more actions than the ceiling in the window: copying from it is paused (status paused, reason recorded) until resumed.',
    data: obj(
      { actions: Type.Integer(), windowMs: Type.Integer(), ceiling: Type.Integer(), reason: Str },
      'circuit breaker tripped',
    ),
  },
  'user.sign_in_failed': {
    version: 1,
    description:
      "A wrong password was given for the user's account (sign-in, or the current password of a password change), or a wrong second-factor code after a right password (attempt second_factor). retryAfterSec: how long the account's next try must now wait (null = no wait yet).",
    data: obj(
      {
        attempt: Type.Union([Type.Literal('sign_in'), Type.Literal('password_change'), Type.Literal('second_factor')]),
        clientAddress: NStr,
        failures: Type.Union([Type.Integer(), Type.Null()]),
        retryAfterSec: Type.Union([Type.Integer(), Type.Null()]),
      },
      'sign-in failed',
    ),
  },
  'user.password_changed': {
    version: 1,
    description:
      "The user's password was changed (by the user, or reset by the operator); every access token was revoked.",
    data: obj(
      { by: Type.Union([Type.Literal('user'), Type.Literal('operator')]), tokensRevoked: Type.Integer() },
      'password changed',
    ),
  },
  'slo.breached': {
    version: 1,
    description:
      "A Slave's service levels broke its group's target (docs/slo.md): latency p99 or p50, copy success, drift or slippage over the target's rolling window. Raised once per breach; slo.recovered ends it.",
    data: obj(sloBase, 'service level breached'),
  },
  'slo.recovered': {
    version: 1,
    description:
      "A Slave's breached service level meets its group's target again (or the target no longer watches it); breachedAt is when the breach began.",
    data: obj({ ...sloBase, breachedAt: Type.String({ format: 'date-time' }) }, 'service level recovered'),
  },
} as const satisfies Record<string, Entry>;

export type EventType = keyof typeof entries;
export const EVENT_TYPES = Object.keys(entries) as EventType[];
export const isEventType = (t: string): t is EventType => Object.hasOwn(entries, t);

/** The JSON schema of a whole event of one type, as it travels on a webhook, the stream and the list. */
export function envelopeSchema(type: EventType) {
  const e: Entry = entries[type];
  return Type.Object(
    {
      id: Type.String({ description: 'event id (evt_...); also the webhook-id header: deduplicate on it' }),
      type: Type.Literal(type),
      timestamp: Type.String({ format: 'date-time' }),
      accountId: Type.Union([Type.String(), Type.Null()], {
        description: 'the account the event is about; null for user-level events',
      }),
      sequence: Type.Integer({
        description: 'dense per account (per user when accountId is null), from 1; 0 for webhook.test',
      }),
      schemaVersion: Type.Literal(e.version),
      data: e.data,
    },
    { ...OPEN, $id: `Event.${type}`, title: `Event.${type}`, description: e.description },
  );
}

/**
 * The name of a type's envelope among the OpenAPI document's components: `account.status_changed` ->
 * `AccountStatusChangedEvent` (a client generator turns it into a readable type name).
 */
export const eventComponentName = (type: string): string =>
  `${type
    .split(/[._]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('')}Event`;

/** The envelope for serialising any event (data is left open; per-type schemas are in the catalogue). */
export const AnyEventSchema = Type.Object(
  {
    id: Type.String(),
    type: Type.String({ description: 'one of the catalogue types: GET /v1/event-types' }),
    timestamp: Type.String({ format: 'date-time' }),
    accountId: Type.Union([Type.String(), Type.Null()]),
    sequence: Type.Integer(),
    schemaVersion: Type.Integer(),
    data: Type.Object({}, { additionalProperties: true }),
  },
  OPEN,
);

export interface CatalogueItem {
  type: EventType;
  schemaVersion: number;
  description: string;
  schema: TSchema;
}

export function catalogue(): CatalogueItem[] {
  return EVENT_TYPES.map((type) => ({
    type,
    schemaVersion: entries[type].version,
    description: entries[type].description,
    schema: envelopeSchema(type),
  }));
}
