import type { Decimal } from '../../domain/decimal.js';
import { AppError } from '../../domain/errors.js';
import type { Position } from '../../domain/types.js';
import { confirmed, denied, type OrderOutcome, rejected } from '../adapter.js';
import type { DxBook } from './book.js';
import type { DxOrder } from './parse.js';
import type { DxRawClient, WireResult } from './raw-client.js';
import { freshCode, protection } from './requests.js';

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

/** A failure before anything was sent (login, account read): safe to retry, so `denied`, not unresolved. */
export function notSent(err: unknown): OrderOutcome {
  if (err instanceof AppError) return denied(err.code, `not sent: ${err.message}`);
  return denied('internal_error', `not sent: ${err instanceof Error ? err.message : String(err)}`);
}
