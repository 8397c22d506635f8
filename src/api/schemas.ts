import { Type, type Static } from 'typebox';
import type { Account } from '../domain/account.js';
import type { Order, Position } from '../domain/types.js';
import { toNum } from '../domain/decimal.js';
import type { Capabilities } from '../platforms/adapter.js';

/** Marks a part of the document that the spec leaves open ("not shown"): see docs/open-points.md. */
export const OPEN = { 'x-open-point': true } as const;

export const ErrorBody = Type.Object(
  {
    code: Type.String({ description: 'machine-readable error code' }),
    error: Type.String({ description: 'what went wrong, for a person' }),
    requestId: Type.String({ description: 'id of this request; also in the x-request-id header' }),
  },
  { additionalProperties: true },
);

const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, ErrorBody]));
export const stdErrors = (...extra: number[]) => errors(400, 401, 404, 413, 429, 500, ...extra);

const LimitPolicy = Type.Union([
  Type.Object({
    quota: Type.Integer({
      description: 'requests per window (the bucket holds this many; it refills evenly over the window)',
    }),
    windowSec: Type.Integer(),
    dedicated: Type.Boolean({
      description:
        'true when the operator set this limit for the key (spec 8.3: higher dedicated limits); false = the default',
    }),
  }),
  Type.Null(),
]);
/** Family V rate limits of one credential (numbers: open point 14). */
export const RateLimitsSchema = Type.Object(
  { writes: LimitPolicy, reads: LimitPolicy },
  { ...OPEN, description: 'family V rate limits of this credential; null = not limited' },
);

const Num = Type.Number();
const NullableNum = Type.Union([Type.Number(), Type.Null()]);
const NullableStr = Type.Union([Type.String(), Type.Null()]);

export const HealthSchema = Type.Object(
  {
    state: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('down')]),
    connected: Type.Boolean(),
    tradingAllowed: Type.Boolean(),
    inSync: Type.Boolean(),
    dataStale: Type.Boolean(),
    reconnectRequired: Type.Boolean(),
    checkedAt: NullableStr,
    lastError: NullableStr,
  },
  { ...OPEN, description: 'account health (the field name and shape are our choice: open point)' },
);

/** Account fields beyond id/platform/role/status are our choice (open point). */
export const AccountSchema = Type.Object({
  id: Type.String(),
  platform: Type.String({ description: 'sim, platforma, platformb, platformc or platformd' }),
  role: Type.Union([Type.Literal('master'), Type.Literal('slave')]),
  status: Type.String({
    description:
      'connected, paused, locked, disconnected, reconnect_required, disabled or unverified (values beyond connected: open point)',
  }),
  statusReason: NullableStr,
  health: HealthSchema,
  name: Type.String(),
  accountNumber: Type.String(),
  brokerName: NullableStr,
  environment: NullableStr,
  currency: NullableStr,
  balance: NullableNum,
  equity: NullableNum,
  groupId: NullableStr,
  createdAt: Type.String(),
});
export type AccountJson = Static<typeof AccountSchema>;

export const toAccountJson = (a: Account): AccountJson => ({
  id: a.id,
  platform: a.platform,
  role: a.role,
  status: a.status,
  statusReason: a.statusReason,
  health: a.health,
  name: a.name,
  accountNumber: a.brokerAccountNumber,
  brokerName: a.brokerName,
  environment: a.environment,
  currency: a.currency,
  balance: toNum(a.balance),
  equity: toNum(a.equity),
  groupId: a.groupId,
  createdAt: a.createdAt.toISOString(),
});

export const PositionSchema = Type.Object(
  {
    id: Type.String(),
    symbol: Type.String(),
    side: Type.String(),
    volume: Num,
    openPrice: Num,
    currentPrice: NullableNum,
    stopLoss: NullableNum,
    takeProfit: NullableNum,
    profit: NullableNum,
    openedAt: Type.String(),
    tag: NullableStr,
  },
  OPEN,
);

export const toPositionJson = (p: Position) => ({
  id: p.id,
  symbol: p.symbol,
  side: p.side,
  volume: p.volume.toNumber(),
  openPrice: p.openPrice.toNumber(),
  currentPrice: toNum(p.currentPrice),
  stopLoss: toNum(p.stopLoss),
  takeProfit: toNum(p.takeProfit),
  profit: toNum(p.profit),
  openedAt: p.openedAt,
  tag: p.tag,
});

export const OrderSchema = Type.Object(
  {
    id: Type.String(),
    symbol: Type.String(),
    side: Type.String(),
    type: Type.String(),
    volume: Num,
    filledVolume: Num,
    price: NullableNum,
    stopLoss: NullableNum,
    takeProfit: NullableNum,
    status: Type.String(),
    positionId: NullableStr,
    createdAt: Type.String(),
    updatedAt: Type.String(),
    tag: NullableStr,
  },
  OPEN,
);

export const toOrderJson = (o: Order) => ({
  id: o.id,
  symbol: o.symbol,
  side: o.side,
  type: o.type,
  volume: o.volume.toNumber(),
  filledVolume: o.filledVolume.toNumber(),
  price: toNum(o.price),
  stopLoss: toNum(o.stopLoss),
  takeProfit: toNum(o.takeProfit),
  status: o.status,
  positionId: o.positionId,
  createdAt: o.createdAt,
  updatedAt: o.updatedAt,
  tag: o.tag,
});

export const CapabilitiesSchema = Type.Object(
  {
    platform: Type.String(),
    hedging: Type.Boolean(),
    orderTypes: Type.Array(Type.String()),
    has: Type.Record(Type.String(), Type.Union([Type.Boolean(), Type.Literal('emulated')])),
    correlationTag: Type.Object({ field: Type.String(), maxLength: Type.Integer() }),
    rateLimitPerSecond: Num,
    selfPaced: Type.Optional(Type.Boolean({ description: 'the adapter paces itself by the limits the broker serves' })),
    volumeUnit: Type.String(),
  },
  OPEN,
);

export const toCapabilitiesJson = (c: Capabilities) => ({ ...c, has: { ...c.has } });

export const AccountIdParams = Type.Object({ account_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
