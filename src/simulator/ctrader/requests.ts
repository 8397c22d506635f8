import { setTimeout as sleep } from 'node:timers/promises';
import { Decimal, dec } from '../../domain/decimal.js';
import type { OrderType, Side } from '../../domain/types.js';
import {
  ExecutionType,
  OrderStatus,
  OrderType as OT,
  PositionStatus,
  TradeSide,
} from '../../protocols/ctrader/enums.js';
import type { Envelope } from '../../protocols/ctrader/messages.js';
import { PT } from '../../protocols/ctrader/payload-types.js';
import { fromRelative } from '../../protocols/ctrader/units.js';
import type { ActiveFault, FaultOp, SimInstrument } from '../contract.js';
import { accountByCtid, assetIdOf, assetsOfSymbol, ctidOf, environmentOf, traderLoginOf } from './ids.js';
import type { Reply } from './server-events.js';
import type { AuthorisedAccount, ClientSession as SimSession } from './context.js';
import { spotBody } from './spots.js';
import { simErrorCode } from './sim-errors.js';

type Body = Record<string, any>;

/** Business refusals of a write travel as ProtoOAOrderErrorEvent; everything else as ProtoOAErrorRes. */
class Refusal extends Error {
  constructor(
    readonly errorCode: string,
    message: string,
    readonly ids: { orderId?: string; positionId?: string } = {},
  ) {
    super(message);
  }
}

const READS: Record<number, (s: SimSession, acc: AuthorisedAccount, body: Body) => Reply[]> = {
  [PT.TRADER_REQ]: trader,
  [PT.ASSET_LIST_REQ]: assets,
  [PT.SYMBOLS_LIST_REQ]: symbolsList,
  [PT.SYMBOL_BY_ID_REQ]: symbolById,
  [PT.RECONCILE_REQ]: reconcile,
  [PT.DEAL_LIST_REQ]: dealList,
  [PT.ORDER_LIST_REQ]: orderList,
  [PT.GET_POSITION_UNREALIZED_PNL_REQ]: unrealizedPnl,
  [PT.SUBSCRIBE_SPOTS_REQ]: subscribeSpots,
  [PT.UNSUBSCRIBE_SPOTS_REQ]: unsubscribeSpots,
};

type RefuseAs = 'cancelled' | 'rejected';
const WRITES: Record<
  number,
  {
    op: Exclude<FaultOp, '*'>;
    run: (s: SimSession, acc: AuthorisedAccount, body: Body, partialRatio?: number, refuseAs?: RefuseAs) => Reply[];
  }
> = {
  [PT.NEW_ORDER_REQ]: { op: 'placeOrder', run: newOrder },
  [PT.AMEND_POSITION_SLTP_REQ]: { op: 'modifyPosition', run: amendPositionSltp },
  [PT.CLOSE_POSITION_REQ]: { op: 'closePosition', run: closePosition },
  [PT.CANCEL_ORDER_REQ]: { op: 'cancelOrder', run: cancelOrder },
  [PT.AMEND_ORDER_REQ]: { op: 'modifyOrder', run: amendOrder },
};

export async function handleRequest(s: SimSession, env: Envelope): Promise<void> {
  const id = env.clientMsgId;
  const body = (env.payload ?? {}) as Body;
  const retryAfter = s.rateLimited(env.payloadType);
  if (retryAfter !== null) {
    return s.sendError('BLOCKED_PAYLOAD_TYPE', 'request frequency exceeded', {
      clientMsgId: id,
      ctid: body.ctidTraderAccountId,
      retryAfter,
    });
  }
  switch (env.payloadType) {
    case PT.APPLICATION_AUTH_REQ:
      return applicationAuth(s, body, id);
    case PT.VERSION_REQ:
      return s.send(PT.VERSION_RES, { version: 'copytrade-sim-1' }, id);
  }
  if (env.payload === null)
    return s.sendError('UNSUPPORTED_MESSAGE', `payloadType ${env.payloadType} is not supported`, { clientMsgId: id });
  if (!s.appAuthed)
    return s.sendError('CH_CLIENT_NOT_AUTHENTICATED', 'send ProtoOAApplicationAuthReq first', { clientMsgId: id });
  switch (env.payloadType) {
    case PT.GET_ACCOUNTS_BY_ACCESS_TOKEN_REQ:
      return accountList(s, body, id);
    case PT.REFRESH_TOKEN_REQ:
      return refreshToken(s, body, id);
    case PT.ACCOUNT_AUTH_REQ:
      return accountAuth(s, body, id);
  }
  const read = READS[env.payloadType];
  const write = WRITES[env.payloadType];
  if (!read && !write)
    return s.sendError('UNSUPPORTED_MESSAGE', `payloadType ${env.payloadType} is not a request`, { clientMsgId: id });
  const ctid = String(body.ctidTraderAccountId ?? '');
  const acc = [...s.accounts.values()].find((a) => a.ctid === ctid);
  if (!acc)
    return s.sendError('ACCOUNT_NOT_AUTHORIZED', `account ${ctid} is not authorised on this connection`, {
      clientMsgId: id,
      ctid,
    });
  if (read) return withFaults(s, acc, 'read', id, false, () => read(s, acc, body));
  const w = write!;
  if (acc.scope !== 'trading') {
    return s.send(
      PT.ORDER_ERROR_EVENT,
      { ctidTraderAccountId: ctid, errorCode: 'TRADING_NOT_ALLOWED', description: 'token has view-only scope' },
      id,
    );
  }
  return withFaults(s, acc, w.op, id, true, (ratio, refuseAs) => w.run(s, acc, body, ratio, refuseAs));
}

async function withFaults(
  s: SimSession,
  acc: AuthorisedAccount,
  op: Exclude<FaultOp, '*'>,
  clientMsgId: string | undefined,
  isWrite: boolean,
  apply: (partialRatio?: number, refuseAs?: RefuseAs) => Reply[],
): Promise<void> {
  const fault: ActiveFault | null = s.ctx.broker.faults.take(op, acc.simAccountId);
  const run = (ratio?: number, refuseAs?: RefuseAs): Reply[] | null => {
    try {
      return s.applying(acc.simAccountId, () => apply(ratio, refuseAs));
    } catch (err) {
      refuse(s, acc, clientMsgId, isWrite, err);
      return null;
    }
  };
  const desc = (fallback: string) => fault?.message ?? fallback;
  switch (fault?.kind) {
    case 'reset':
      return s.destroy();
    case 'timeout_before_apply':
      return;
    case 'timeout_after_apply':
      run();
      return;
    case 'cancel_after_timeout':
      // Taken, then refused by the broker; the answer (and its execution events) never reach the client.
      run(undefined, fault.refuseAs ?? 'cancelled');
      return;
    case 'rate_limit':
      return s.sendError('BLOCKED_PAYLOAD_TYPE', desc('request frequency exceeded'), {
        clientMsgId,
        ctid: acc.ctid,
        retryAfter: fault.retryAfterSec ?? 1,
      });
    case 'token_expired':
      s.ctx.tokens.expire(acc.accessToken);
      return s.sendError('OA_AUTH_TOKEN_EXPIRED', desc('access token expired'), { clientMsgId, ctid: acc.ctid });
    case 'token_invalidated':
      s.ctx.tokens.revokeUser(acc.userId, desc('access revoked by the user'));
      return s.sendError('CH_ACCESS_TOKEN_INVALID', desc('access token invalidated'), { clientMsgId, ctid: acc.ctid });
    case 'disconnect':
      return s.disconnect(desc('connection closed by the server'));
    case 'reject':
      return refuse(
        s,
        acc,
        clientMsgId,
        isWrite,
        new Refusal('TRADING_DISABLED', desc('rejected by the broker (injected fault)')),
      );
    case 'delay': {
      const replies = run();
      if (!replies) return;
      await sleep(fault.delayMs ?? 1000);
      return s.sendAll(replies, clientMsgId);
    }
    case 'partial_fill': {
      const replies = run(fault.partialRatio ?? 0.5);
      if (replies) s.sendAll(replies, clientMsgId);
      return;
    }
    default: {
      const replies = run();
      if (replies) s.sendAll(replies, clientMsgId);
    }
  }
}

function refuse(
  s: SimSession,
  acc: AuthorisedAccount,
  clientMsgId: string | undefined,
  isWrite: boolean,
  err: unknown,
): void {
  const code = err instanceof Refusal ? err.errorCode : simErrorCode(err);
  if (code === null) throw err;
  const description = (err as Error).message;
  if (!isWrite || code === 'INVALID_REQUEST') return s.sendError(code, description, { clientMsgId, ctid: acc.ctid });
  const body: Body = { ctidTraderAccountId: acc.ctid, errorCode: code, description };
  if (err instanceof Refusal && err.ids.orderId) body.orderId = err.ids.orderId;
  if (err instanceof Refusal && err.ids.positionId) body.positionId = err.ids.positionId;
  s.send(PT.ORDER_ERROR_EVENT, body, clientMsgId);
}

// ---- session -------------------------------------------------------------------------------------------

function applicationAuth(s: SimSession, body: Body, id?: string): void {
  if (body.clientId !== s.ctx.clientId)
    return s.sendError('CH_OA_CLIENT_NOT_FOUND', 'unknown client id', { clientMsgId: id });
  if (body.clientSecret !== s.ctx.clientSecret)
    return s.sendError('CH_CLIENT_AUTH_FAILURE', 'wrong client secret', { clientMsgId: id });
  if (s.appAuthed)
    return s.sendError('CH_CLIENT_ALREADY_AUTHENTICATED', 'application already authenticated', { clientMsgId: id });
  let authed = 0;
  for (const other of s.ctx.sessions) if (other.appAuthed && other.environment === s.environment) authed += 1;
  if (authed >= s.ctx.tuning.maxConnectionsPerApp)
    return s.sendError('CONNECTIONS_LIMIT_EXCEEDED', 'too many connections for this app', { clientMsgId: id });
  s.appAuthed = true;
  s.send(PT.APPLICATION_AUTH_RES, {}, id);
}

function tokenError(s: SimSession, token: string, id?: string, ctid?: string): boolean {
  const check = s.ctx.tokens.check(token);
  if (check.ok) return false;
  const code = check.reason === 'expired' ? 'OA_AUTH_TOKEN_EXPIRED' : 'CH_ACCESS_TOKEN_INVALID';
  s.sendError(code, `access token ${check.reason}`, { clientMsgId: id, ctid });
  return true;
}

function accountList(s: SimSession, body: Body, id?: string): void {
  const token = String(body.accessToken ?? '');
  if (tokenError(s, token, id)) return;
  const check = s.ctx.tokens.check(token);
  if (!check.ok) return;
  const accounts = s.ctx.broker.accounts().filter((a) => a.meta['ctidUserId'] === check.userId);
  s.send(
    PT.GET_ACCOUNTS_BY_ACCESS_TOKEN_RES,
    {
      accessToken: token,
      permissionScope: check.scope === 'trading' ? 1 : 0,
      ctidTraderAccount: accounts.map((a) => ({
        ctidTraderAccountId: ctidOf(a),
        isLive: environmentOf(a) === 'live',
        traderLogin: traderLoginOf(a),
        brokerTitleShort: a.meta['brokerName'] ?? 'SimBroker',
      })),
    },
    id,
  );
}

function refreshToken(s: SimSession, body: Body, id?: string): void {
  const out = s.ctx.tokens.refreshPair(String(body.refreshToken ?? ''));
  if ('error' in out) return s.sendError('CH_ACCESS_TOKEN_INVALID', out.error, { clientMsgId: id });
  s.send(
    PT.REFRESH_TOKEN_RES,
    {
      accessToken: out.accessToken,
      tokenType: out.tokenType,
      expiresIn: out.expiresIn,
      refreshToken: out.refreshToken,
    },
    id,
  );
}

function accountAuth(s: SimSession, body: Body, id?: string): void {
  const ctid = String(body.ctidTraderAccountId ?? '');
  const token = String(body.accessToken ?? '');
  const acc = accountByCtid(s.ctx.broker, ctid);
  if (!acc)
    return s.sendError('CH_CTID_TRADER_ACCOUNT_NOT_FOUND', `no trading account ${ctid}`, { clientMsgId: id, ctid });
  const fault = s.ctx.broker.faults.take('auth', acc.id);
  if (fault?.kind === 'reset') return s.destroy();
  if (fault?.kind === 'disconnect') return s.disconnect(fault.message ?? 'connection closed by the server');
  if (fault?.kind === 'timeout_before_apply' || fault?.kind === 'timeout_after_apply') return;
  if (fault?.kind === 'rate_limit')
    return s.sendError('BLOCKED_PAYLOAD_TYPE', 'request frequency exceeded', {
      clientMsgId: id,
      ctid,
      retryAfter: fault.retryAfterSec ?? 1,
    });
  if (fault?.kind === 'token_expired' || fault?.kind === 'token_invalidated' || fault?.kind === 'reject') {
    return s.sendError(
      fault.kind === 'token_expired' ? 'OA_AUTH_TOKEN_EXPIRED' : 'CH_ACCESS_TOKEN_INVALID',
      fault.message ?? 'access token refused',
      { clientMsgId: id, ctid },
    );
  }
  if (environmentOf(acc) !== s.environment) {
    return s.sendError(
      'CH_CTID_TRADER_ACCOUNT_NOT_FOUND',
      `account ${ctid} is a ${environmentOf(acc)} account; this is the ${s.environment} endpoint`,
      { clientMsgId: id, ctid },
    );
  }
  if (tokenError(s, token, id, ctid)) return;
  const check = s.ctx.tokens.check(token);
  if (!check.ok) return;
  if (acc.meta['ctidUserId'] !== check.userId)
    return s.sendError('CH_ACCESS_TOKEN_INVALID', `token does not grant account ${ctid}`, { clientMsgId: id, ctid });
  const existing = s.accounts.get(acc.id);
  if (existing && existing.accessToken === token)
    return s.sendError('ALREADY_LOGGED_IN', `account ${ctid} already authorised`, { clientMsgId: id, ctid });
  s.accounts.set(acc.id, { simAccountId: acc.id, ctid, accessToken: token, userId: check.userId, scope: check.scope });
  s.send(PT.ACCOUNT_AUTH_RES, { ctidTraderAccountId: ctid }, id);
}

// ---- reads ---------------------------------------------------------------------------------------------

function trader(s: SimSession, acc: AuthorisedAccount): Reply[] {
  const a = s.ctx.broker.account(acc.simAccountId)!;
  return [[PT.TRADER_RES, { ctidTraderAccountId: acc.ctid, trader: s.ctx.wire.trader(a, s.ctx.broker.state(a.id)) }]];
}

function assets(s: SimSession, acc: AuthorisedAccount): Reply[] {
  const names = new Set<string>([s.ctx.broker.account(acc.simAccountId)!.currency]);
  for (const i of s.ctx.broker.instruments()) {
    const { base, quote } = assetsOfSymbol(i.symbol);
    names.add(base).add(quote);
  }
  const asset = [...names].sort().map((name) => ({ assetId: assetIdOf(name), name, displayName: name, digits: 2 }));
  return [[PT.ASSET_LIST_RES, { ctidTraderAccountId: acc.ctid, asset }]];
}

function symbolsList(s: SimSession, acc: AuthorisedAccount): Reply[] {
  return [
    [
      PT.SYMBOLS_LIST_RES,
      { ctidTraderAccountId: acc.ctid, symbol: s.ctx.broker.instruments().map((i) => s.ctx.wire.lightSymbol(i)) },
    ],
  ];
}

function symbolById(s: SimSession, acc: AuthorisedAccount, body: Body): Reply[] {
  const ids: string[] = (body.symbolId ?? []).map(String);
  const found = ids.map((x) => s.ctx.broker.instrument(Number(x))).filter((i): i is SimInstrument => i !== null);
  if (found.length === 0) throw new Refusal('SYMBOL_NOT_FOUND', `no symbol ${ids.join(',')}`);
  return [[PT.SYMBOL_BY_ID_RES, { ctidTraderAccountId: acc.ctid, symbol: found.map((i) => s.ctx.wire.symbol(i)) }]];
}

function reconcile(s: SimSession, acc: AuthorisedAccount): Reply[] {
  const b = s.ctx.broker;
  return [
    [
      PT.RECONCILE_RES,
      {
        ctidTraderAccountId: acc.ctid,
        position: b.positions(acc.simAccountId).map((p) => s.ctx.wire.position(p)),
        order: b.orders(acc.simAccountId).map((o) => s.ctx.wire.order(o)),
      },
    ],
  ];
}

const window = (body: Body, from: string, to: string) => ({
  ...(body[from] !== undefined ? { from: new Date(Number(body[from])) } : {}),
  ...(body[to] !== undefined ? { to: new Date(Number(body[to])) } : {}),
});

function dealList(s: SimSession, acc: AuthorisedAccount, body: Body): Reply[] {
  const all = s.ctx.broker.deals(acc.simAccountId, window(body, 'fromTimestamp', 'toTimestamp'));
  const max = body.maxRows ? Number(body.maxRows) : all.length;
  const rows = all.slice(0, max);
  const deal = rows.map((d) =>
    s.ctx.wire.deal(d, {
      requested: s.ctx.broker.order(acc.simAccountId, d.orderId)?.volume ?? d.volume,
      ...(d.entry === 'out' ? { entryPrice: s.ctx.wire.entryPrice(acc.simAccountId, d.positionId) ?? d.price } : {}),
    }),
  );
  return [[PT.DEAL_LIST_RES, { ctidTraderAccountId: acc.ctid, deal, hasMore: rows.length < all.length }]];
}

function orderList(s: SimSession, acc: AuthorisedAccount, body: Body): Reply[] {
  const orders = s.ctx.broker.orders(acc.simAccountId, {
    includeHistory: true,
    ...window(body, 'fromTimestamp', 'toTimestamp'),
  });
  const order = orders.map((o) => {
    const ds = s.ctx.broker.dealsOf(acc.simAccountId, { orderId: o.id });
    const px = ds.at(-1)?.price ?? null;
    return s.ctx.wire.order(o, { executionPrice: px, closing: ds.some((d) => d.entry === 'out') });
  });
  return [[PT.ORDER_LIST_RES, { ctidTraderAccountId: acc.ctid, order, hasMore: false }]];
}

function unrealizedPnl(s: SimSession, acc: AuthorisedAccount): Reply[] {
  const rows = s.ctx.broker.positions(acc.simAccountId).map((p) => {
    const v = (p.profit ?? dec(0)).mul(100).toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toFixed(0);
    return { positionId: p.id, grossUnrealizedPnL: v, netUnrealizedPnL: v };
  });
  return [
    [
      PT.GET_POSITION_UNREALIZED_PNL_RES,
      { ctidTraderAccountId: acc.ctid, positionUnrealizedPnL: rows, moneyDigits: 2 },
    ],
  ];
}

function subscribeSpots(s: SimSession, acc: AuthorisedAccount, body: Body): Reply[] {
  const symbols = (body.symbolId ?? []).map((x: string) => s.ctx.broker.instrument(Number(x)));
  if (symbols.some((i: SimInstrument | null) => i === null)) throw new Refusal('SYMBOL_NOT_FOUND', 'unknown symbol id');
  const subs = s.spots.get(acc.simAccountId) ?? new Map<string, string>();
  s.spots.set(acc.simAccountId, subs);
  const replies: Reply[] = [[PT.SUBSCRIBE_SPOTS_RES, { ctidTraderAccountId: acc.ctid }]];
  // The fact sheet: right after subscribing, one spot event with the latest prices.
  for (const i of symbols as SimInstrument[]) {
    const spot = spotBody(s.ctx, acc.ctid, i.symbol);
    subs.set(i.symbol, `${spot.bid}/${spot.ask}`);
    replies.push([PT.SPOT_EVENT, spot]);
  }
  return replies;
}

function unsubscribeSpots(s: SimSession, acc: AuthorisedAccount, body: Body): Reply[] {
  const subs = s.spots.get(acc.simAccountId);
  for (const x of body.symbolId ?? []) {
    const i = s.ctx.broker.instrument(Number(x));
    if (i) subs?.delete(i.symbol);
  }
  return [[PT.UNSUBSCRIBE_SPOTS_RES, { ctidTraderAccountId: acc.ctid }]];
}

// ---- writes --------------------------------------------------------------------------------------------

const exec = (acc: AuthorisedAccount, executionType: number, extra: Body): Reply => [
  PT.EXECUTION_EVENT,
  { ctidTraderAccountId: acc.ctid, executionType, isServerEvent: false, ...extra },
];

function instrumentOf(s: SimSession, symbolId: unknown): SimInstrument {
  const i = s.ctx.broker.instrument(Number(symbolId));
  if (!i) throw new Refusal('SYMBOL_NOT_FOUND', `no symbol ${String(symbolId)}`);
  return i;
}

const onTick = (v: Decimal, i: SimInstrument): Decimal => v.toDecimalPlaces(i.digits, Decimal.ROUND_HALF_UP);

function newOrder(
  s: SimSession,
  acc: AuthorisedAccount,
  body: Body,
  partialRatio?: number,
  refuseAs?: RefuseAs,
): Reply[] {
  const { broker, wire } = s.ctx;
  const i = instrumentOf(s, body.symbolId);
  const side: Side = body.tradeSide === TradeSide.SELL ? 'sell' : 'buy';
  const type: OrderType | null =
    body.orderType === OT.MARKET
      ? 'market'
      : body.orderType === OT.LIMIT
        ? 'limit'
        : body.orderType === OT.STOP
          ? 'stop'
          : null;
  if (!type) throw new Refusal('INVALID_REQUEST', `orderType ${body.orderType} is not supported by the simulator`);
  const clientOrderId: string = body.clientOrderId ?? '';
  const label: string = body.label ?? '';
  if (clientOrderId.length > 50) throw new Refusal('INVALID_REQUEST', 'clientOrderId longer than 50 characters');
  if (label.length > 100) throw new Refusal('INVALID_REQUEST', 'label longer than 100 characters');
  if (type === 'market' && (body.stopLoss !== undefined || body.takeProfit !== undefined)) {
    throw new Refusal(
      'TRADING_BAD_STOPS',
      'absolute stopLoss/takeProfit are not accepted for MARKET orders; use relativeStopLoss/relativeTakeProfit',
    );
  }
  const lots = wire.lots(i.symbol, String(body.volume));
  const price = type === 'limit' ? body.limitPrice : type === 'stop' ? body.stopPrice : undefined;
  if (type !== 'market' && price === undefined)
    throw new Refusal('TRADING_BAD_PRICES', `${type} order needs ${type}Price`);
  const q = broker.quote(i.symbol);
  const ref = price !== undefined ? dec(price) : side === 'buy' ? q.ask : q.bid;
  const dir = side === 'buy' ? 1 : -1;
  const stop = (abs: unknown, rel: unknown, sign: number): Decimal | null => {
    if (abs !== undefined) return dec(abs as number);
    if (rel !== undefined) return onTick(ref.plus(fromRelative(rel as string).mul(sign * dir)), i);
    return null;
  };
  const stopLoss = stop(body.stopLoss, body.relativeStopLoss, -1);
  const takeProfit = stop(body.takeProfit, body.relativeTakeProfit, 1);
  const result = broker.placeOrder(
    acc.simAccountId,
    {
      symbol: i.symbol,
      side,
      type,
      volume: lots,
      price: price === undefined ? null : dec(price),
      stopLoss,
      takeProfit,
      tag: clientOrderId || label,
    },
    { ...(partialRatio === undefined ? {} : { partialRatio }), ...(refuseAs ? { refuseAs } : {}) },
  );
  const accepted = exec(acc, ExecutionType.ORDER_ACCEPTED, {
    order: wire.order({ ...result.order, status: 'pending', filledVolume: dec(0) }, { status: OrderStatus.ACCEPTED }),
  });
  if (type !== 'market' || !result.deal) return [accepted];
  const d = result.deal;
  const partial = d.volume.lt(result.order.volume);
  const position = result.position
    ? wire.position(result.position, result.position.volume.isZero() ? PositionStatus.CLOSED : PositionStatus.OPEN)
    : closedStub(s, acc, d.positionId, d.symbol, d.side === 'buy' ? 'sell' : 'buy');
  const filled = exec(acc, partial ? ExecutionType.ORDER_PARTIAL_FILL : ExecutionType.ORDER_FILLED, {
    order: wire.order(result.order, {
      status: OrderStatus.FILLED,
      executionPrice: d.price,
      closing: d.entry === 'out',
    }),
    position,
    deal: wire.deal(d, {
      requested: result.order.volume,
      ...(d.entry === 'out'
        ? {
            entryPrice: wire.entryPrice(acc.simAccountId, d.positionId) ?? d.price,
            balance: broker.state(acc.simAccountId).balance,
          }
        : {}),
    }),
  });
  return [accepted, filled];
}

/** A position that no longer exists (closed by this fill), described from its deals. */
function closedStub(s: SimSession, acc: AuthorisedAccount, positionId: string, symbol: string, side: Side): Body {
  const deals = s.ctx.broker.dealsOf(acc.simAccountId, { positionId });
  const first = deals[0];
  return {
    positionId,
    tradeData: {
      symbolId: s.ctx.wire.symbolId(symbol),
      volume: '0',
      tradeSide: side === 'buy' ? TradeSide.BUY : TradeSide.SELL,
      openTimestamp: first ? String(Date.parse(first.time)) : undefined,
      label: first?.tag ?? undefined,
    },
    positionStatus: PositionStatus.CLOSED,
    swap: '0',
    price: (s.ctx.wire.entryPrice(acc.simAccountId, positionId) ?? first?.price ?? dec(0)).toNumber(),
    moneyDigits: 2,
  };
}

function amendPositionSltp(s: SimSession, acc: AuthorisedAccount, body: Body): Reply[] {
  const positionId = String(body.positionId);
  // Omitted stopLoss/takeProfit remove them: the request states the whole protection (fact sheet §9 assumption).
  const p = s.ctx.broker.modifyPosition(acc.simAccountId, positionId, {
    stopLoss: body.stopLoss === undefined ? null : dec(body.stopLoss),
    takeProfit: body.takeProfit === undefined ? null : dec(body.takeProfit),
  });
  return [exec(acc, ExecutionType.ORDER_REPLACED, { position: s.ctx.wire.position(p) })];
}

function closePosition(s: SimSession, acc: AuthorisedAccount, body: Body): Reply[] {
  const { broker, wire } = s.ctx;
  const positionId = String(body.positionId);
  // One lookup, not a valuation of every position: a mass close would otherwise cost the square of its size.
  const before = broker.positionById(acc.simAccountId, positionId);
  if (!before) throw new Refusal('POSITION_NOT_FOUND', `no open position ${positionId}`, { positionId });
  const lots = wire.lots(before.symbol, String(body.volume));
  const result = broker.closePosition(acc.simAccountId, positionId, lots);
  const d = result.deal!;
  const accepted = exec(acc, ExecutionType.ORDER_ACCEPTED, {
    order: wire.order(
      { ...result.order, status: 'pending', filledVolume: dec(0) },
      { status: OrderStatus.ACCEPTED, closing: true },
    ),
  });
  const position = result.position
    ? wire.position(result.position)
    : wire.position(before, PositionStatus.CLOSED, lots);
  const filled = exec(acc, ExecutionType.ORDER_FILLED, {
    order: wire.order(result.order, { status: OrderStatus.FILLED, executionPrice: d.price, closing: true }),
    position,
    deal: wire.deal(d, { entryPrice: before.openPrice, balance: broker.account(acc.simAccountId)!.balance }),
  });
  return [accepted, filled];
}

function cancelOrder(s: SimSession, acc: AuthorisedAccount, body: Body): Reply[] {
  const o = s.ctx.broker.cancelOrder(acc.simAccountId, String(body.orderId));
  return [exec(acc, ExecutionType.ORDER_CANCELLED, { order: s.ctx.wire.order(o) })];
}

function amendOrder(s: SimSession, acc: AuthorisedAccount, body: Body): Reply[] {
  const orderId = String(body.orderId);
  const current = s.ctx.broker.orders(acc.simAccountId).find((o) => o.id === orderId);
  if (!current) throw new Refusal('ORDER_NOT_FOUND', `no pending order ${orderId}`, { orderId });
  const price = body.limitPrice ?? body.stopPrice;
  const change: { price?: Decimal; volume?: Decimal; stopLoss?: Decimal | null; takeProfit?: Decimal | null } = {};
  if (price !== undefined) change.price = dec(price);
  if (body.volume !== undefined) change.volume = s.ctx.wire.lots(current.symbol, String(body.volume));
  if (body.stopLoss !== undefined) change.stopLoss = dec(body.stopLoss);
  if (body.takeProfit !== undefined) change.takeProfit = dec(body.takeProfit);
  const o = s.ctx.broker.modifyOrder(acc.simAccountId, orderId, change);
  return [exec(acc, ExecutionType.ORDER_REPLACED, { order: s.ctx.wire.order(o) })];
}
