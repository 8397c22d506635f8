import type { Decimal } from '../../domain/decimal.js';
import { AppError } from '../../domain/errors.js';
import type { Position } from '../../domain/types.js';
import { confirmed, denied, type ModifyOrderChange, type OrderOutcome, rejected } from '../adapter.js';
import type { DxBook } from './book.js';
import type { DxOrder } from './parse.js';
import type { DxRawClient, WireResult } from './raw-client.js';
import { freshCode, openOrder, opposite, protection } from './requests.js';

export type WriteResult = { ok: true; body: unknown } | { ok: false; outcome: OrderOutcome };

/**
 * After an accepted write: read the order back by its orderCode to report fill, position and price. A failed
 * read still confirms (the server took it); only a final refusal turns it into a rejection.
 */
export async function settleByCode(book: DxBook, code: string, market: boolean, sentAt: number): Promise<OrderOutcome> {
  let found: DxOrder | undefined;
  const inBook = async () => (await book.working()).find((o) => o.orderCode === code);
  try {
    found = market
      ? ((await book.byCode(code, sentAt)) ?? (await inBook()))
      : ((await inBook()) ?? (await book.byCode(code, sentAt)));
  } catch {
    return confirmed({ brokerTime: new Date().toISOString() });
  }
  if (!found) return confirmed({ brokerTime: new Date().toISOString() });
  const o = found.order;
  if (o.status === 'rejected' || (o.status === 'cancelled' && o.filledVolume.isZero()))
    return rejected('broker_refused', `order ${code} ended ${o.status}`, { orderCode: code, status: o.status });
  const filled = o.filledVolume.gt(0);
  return confirmed({
    brokerOrderId: o.id,
    positionId: o.positionId,
    filledVolume: filled ? o.filledVolume : null,
    fillPrice: filled ? found.averagePrice : null,
    brokerTime: o.updatedAt,
  });
}

interface WriteDeps {
  book: DxBook;
  raw: DxRawClient;
  account: string;
  write(what: string, call: (token: string) => Promise<WireResult>): Promise<WriteResult>;
}

/**
 * SL and TP of a position are its position-attached protection orders (STOP and LIMIT, CLOSE effect): each level
 * that changes is placed, moved (PUT with the order's version as If-Match) or cancelled. Stop loss goes first; a
 * refusal of the take profit after it leaves the new stop loss in place (reported as the refusal).
 */
export async function setProtection(
  d: WriteDeps,
  positionId: string,
  change: { stopLoss: Decimal | null; takeProfit: Decimal | null },
): Promise<OrderOutcome> {
  let pos: Position | undefined;
  let guards: Awaited<ReturnType<DxBook['protections']>>;
  try {
    pos = (await d.book.positions()).find((p) => p.id === positionId);
    guards = await d.book.protections(positionId);
  } catch (err) {
    return notSent(err);
  }
  if (!pos) return rejected('not_found', `no open position ${positionId}`);
  const base = { symbol: pos.symbol, positionSide: pos.side, positionCode: positionId };
  for (const kind of ['sl', 'tp'] as const) {
    const want = kind === 'sl' ? change.stopLoss : change.takeProfit;
    const has = guards[kind];
    if (want === null && !has) continue;
    if (want !== null && has?.level?.eq(want)) continue;
    const what = `${kind === 'sl' ? 'stop loss' : 'take profit'} of ${positionId}`;
    const res =
      want === null
        ? await d.write(`remove ${what}`, (t) => d.raw.cancelOrder(t, d.account, has!.orderCode, has!.version))
        : has
          ? await d.write(`move ${what}`, (t) =>
              d.raw.modifyOrder(
                t,
                d.account,
                protection({ ...base, code: has.orderCode, kind, level: want, replace: true }),
                has.version,
              ),
            )
          : await d.write(`set ${what}`, (t) =>
              d.raw.placeOrder(t, d.account, protection({ ...base, code: freshCode(kind), kind, level: want })),
            );
    if (!res.ok) return res.outcome;
  }
  return confirmed({ positionId, brokerTime: new Date().toISOString() });
}

/**
 * A MARKET order against the position: CLOSE effect on its positionCode, without quantity for all of it (the
 * spec's Order Leg: "whole position will be closed"); a netting account sends the opposite order of the size.
 */
export async function closeOpen(
  d: WriteDeps,
  positionId: string,
  volume: Decimal | undefined,
  positionBased: boolean,
  lotOf: (symbol: string) => Decimal,
): Promise<OrderOutcome> {
  let pos: Position | undefined;
  try {
    pos = (await d.book.positions()).find((p) => p.id === positionId);
  } catch (err) {
    return notSent(err);
  }
  if (!pos) return rejected('not_found', `no open position ${positionId}`);
  const code = freshCode('cl');
  const body = {
    orderCode: code,
    type: 'MARKET',
    instrument: pos.symbol,
    ...(volume !== undefined || !positionBased
      ? { quantity: (volume ?? pos.volume).mul(lotOf(pos.symbol)).toFixed() }
      : {}),
    ...(positionBased ? { positionEffect: 'CLOSE', positionCode: positionId } : {}),
    side: opposite(pos.side),
    tif: 'IOC',
  };
  const sentAt = Date.now();
  const res = await d.write('close position', (t) => d.raw.placeOrder(t, d.account, body));
  if (!res.ok) return res.outcome;
  const out = await settleByCode(d.book, code, true, sentAt);
  return out.kind === 'confirmed' ? { ...out, positionId } : out;
}

/** DELETE of a working order, conditional on the version it was read with. */
export async function cancelPending(d: WriteDeps, orderId: string): Promise<OrderOutcome> {
  let version: string | undefined;
  try {
    version = (await d.book.working()).find((o) => o.orderCode === orderId)?.version;
  } catch (err) {
    return notSent(err);
  }
  if (version === undefined) return rejected('not_found', `no pending order ${orderId}`);
  const res = await d.write('cancel order', (t) => d.raw.cancelOrder(t, d.account, orderId, version));
  if (!res.ok) return res.outcome;
  return confirmed({ brokerOrderId: orderId, brokerTime: new Date().toISOString(), raw: res.body });
}

/**
 * PUT of a working order's price or size: the spec wants the whole order request again, type omitted, with the
 * version it was read with as If-Match. SL/TP of a pending order are THEN orders of its group: not changed here.
 */
export async function changePending(
  d: WriteDeps,
  orderId: string,
  change: ModifyOrderChange,
  positionBased: boolean,
  lotOf: (symbol: string) => Decimal,
): Promise<OrderOutcome> {
  if (change.stopLoss !== undefined || change.takeProfit !== undefined)
    return denied(
      'unsupported_change',
      'SL/TP of a pending DXtrade order are THEN orders of its group: not changed here',
    );
  let current: DxOrder | undefined;
  try {
    current = (await d.book.working()).find((o) => o.orderCode === orderId);
  } catch (err) {
    return notSent(err);
  }
  if (!current || current.order.type === 'market') return rejected('not_found', `no pending order ${orderId}`);
  const o = current.order;
  const body: Record<string, unknown> = {
    ...openOrder({
      tag: orderId,
      symbol: o.symbol,
      side: o.side,
      type: o.type,
      volume: (change.volume ?? o.volume).mul(lotOf(o.symbol)),
      price: change.price ?? o.price,
      positionBased,
    }),
  };
  delete body.type;
  const version = current.version;
  const res = await d.write('modify order', (t) => d.raw.modifyOrder(t, d.account, body, version));
  if (!res.ok) return res.outcome;
  return confirmed({ brokerOrderId: orderId, brokerTime: new Date().toISOString(), raw: res.body });
}

/** A failure before anything was sent (login, account read): safe to retry, so `denied`, not unresolved. */
export function notSent(err: unknown): OrderOutcome {
  if (err instanceof AppError) return denied(err.code, `not sent: ${err.message}`);
  return denied('internal_error', `not sent: ${err instanceof Error ? err.message : String(err)}`);
}
