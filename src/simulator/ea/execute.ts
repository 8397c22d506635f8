import { type Decimal, dec } from '../../domain/decimal.js';
import { RETCODE } from '../../protocols/bridge/retcodes.js';
import type { AckMsg, CommandMsg } from '../../protocols/bridge/schemas.js';
import { type ActiveFault, type FaultOp, SimError, type SimBrokerApi, type SimErrorCode } from '../contract.js';

/** What the terminal did with a command, and whether (and when) its answer leaves. */
export interface Execution {
  /** null: the answer never leaves (the terminal hung or the connection dropped after the trade). */
  ack: AckMsg | null;
  delayMs: number;
  /** The connection is cut before the answer (nothing applied unless `ack` says so). */
  reset: boolean;
}

const RETCODE_OF: Record<SimErrorCode, [number, string]> = {
  UNKNOWN_ACCOUNT: [RETCODE.INVALID, 'Invalid request'],
  UNKNOWN_SYMBOL: [RETCODE.INVALID, 'Invalid request: unknown symbol'],
  INVALID_VOLUME: [RETCODE.INVALID_VOLUME, 'Invalid volume in the request'],
  INVALID_PRICE: [RETCODE.INVALID_PRICE, 'Invalid price in the request'],
  INVALID_STOPS: [RETCODE.INVALID_STOPS, 'Invalid stops in the request'],
  NOT_ENOUGH_MONEY: [RETCODE.NO_MONEY, 'There is not enough money to complete the request'],
  POSITION_NOT_FOUND: [RETCODE.POSITION_CLOSED, 'Position with the specified identifier has already been closed'],
  ORDER_NOT_FOUND: [RETCODE.INVALID, 'Invalid request: order not found'],
  MARKET_CLOSED: [RETCODE.MARKET_CLOSED, 'Market is closed'],
  REJECTED: [RETCODE.REJECT, 'Request rejected'],
};

const opOf = (c: CommandMsg): Exclude<FaultOp, '*'> =>
  c.action === 'DEAL'
    ? c.position
      ? 'closePosition'
      : 'placeOrder'
    : c.action === 'PENDING'
      ? 'placeOrder'
      : c.action === 'SLTP'
        ? 'modifyPosition'
        : c.action === 'MODIFY'
          ? 'modifyOrder'
          : 'cancelOrder';

const num = (v: string | null): Decimal | null => (v === null ? null : dec(v));

/**
 * OrderSend as MT5 answers it, on the simulated broker: the retcode, the order, deal and position tickets, the
 * filled volume and price; the broker's injected faults are played as a terminal shows them (a rejection is
 * 10006, a rate limit 10024, a partial fill 10010, a timeout an answer that never comes).
 */
export function execute(broker: SimBrokerApi, accountId: string, c: CommandMsg, now: () => number): Execution {
  const fault = broker.faults.take(opOf(c), accountId);
  const ack = (retcode: number, message: string, f: Partial<AckMsg> = {}): AckMsg => ({
    type: 'ack',
    id: c.id,
    retcode,
    message,
    order: null,
    deal: null,
    position: null,
    volume: null,
    price: null,
    time: now(),
    repeated: false,
    retryAfterSec: null,
    ...f,
  });
  const none = { ack: null, delayMs: 0, reset: false };
  switch (fault?.kind) {
    case 'timeout_before_apply':
      return none;
    case 'reset':
    case 'disconnect':
      return { ...none, reset: true };
    case 'reject':
      return { ...none, ack: ack(RETCODE.REJECT, fault.message ?? 'Request rejected') };
    case 'rate_limit':
      return {
        ...none,
        ack: ack(RETCODE.TOO_MANY_REQUESTS, 'Too frequent requests', { retryAfterSec: fault.retryAfterSec ?? null }),
      };
  }
  let answer: AckMsg;
  try {
    answer = apply(broker, accountId, c, fault, ack);
  } catch (err) {
    if (!(err instanceof SimError)) throw err;
    const [code, message] = RETCODE_OF[err.code];
    answer = ack(code, `${message}: ${err.message}`);
  }
  if (fault?.kind === 'timeout_after_apply' || fault?.kind === 'cancel_after_timeout') return { ...none, ack: null };
  return { ack: answer, delayMs: fault?.kind === 'delay' ? (fault.delayMs ?? 0) : 0, reset: false };
}

type AckOf = (retcode: number, message: string, f?: Partial<AckMsg>) => AckMsg;

function apply(broker: SimBrokerApi, acc: string, c: CommandMsg, fault: ActiveFault | null, ack: AckOf): AckMsg {
  switch (c.action) {
    case 'DEAL':
    case 'PENDING': {
      if (c.action === 'DEAL' && c.position) {
        const r = broker.closePosition(acc, c.position, num(c.volume) ?? undefined);
        return ack(RETCODE.DONE, 'Request completed', {
          order: r.order.id,
          deal: r.deal?.id ?? null,
          position: c.position,
          volume: r.deal?.volume.toFixed() ?? null,
          price: r.deal?.price.toFixed() ?? null,
        });
      }
      if (!c.symbol || !c.orderType || !c.volume) return ack(RETCODE.INVALID, 'Invalid request: symbol, type, volume');
      const [side, kind] = c.orderType.split('_') as ['buy' | 'sell', 'limit' | 'stop' | undefined];
      const r = broker.placeOrder(
        acc,
        {
          symbol: c.symbol,
          side,
          type: kind ?? 'market',
          volume: dec(c.volume),
          price: num(c.price),
          stopLoss: num(c.sl),
          takeProfit: num(c.tp),
          tag: c.comment ?? c.id,
        },
        {
          ...(fault?.kind === 'partial_fill' ? { partialRatio: fault.partialRatio ?? 0.5 } : {}),
          ...(fault?.kind === 'cancel_after_timeout' ? { refuseAs: fault.refuseAs ?? 'cancelled' } : {}),
        },
      );
      if (!r.deal) return ack(RETCODE.PLACED, 'Order placed', { order: r.order.id });
      const partial = r.deal.volume.lt(dec(c.volume));
      return ack(
        partial ? RETCODE.DONE_PARTIAL : RETCODE.DONE,
        partial ? 'Only part of the request was completed' : 'Request completed',
        {
          order: r.order.id,
          deal: r.deal.id,
          position: r.deal.positionId,
          volume: r.deal.volume.toFixed(),
          price: r.deal.price.toFixed(),
        },
      );
    }
    case 'SLTP': {
      const p = broker.modifyPosition(acc, c.position ?? '', { stopLoss: num(c.sl), takeProfit: num(c.tp) });
      return ack(RETCODE.DONE, 'Request completed', { position: p.id });
    }
    case 'MODIFY': {
      const change: { price?: Decimal; stopLoss: Decimal | null; takeProfit: Decimal | null } = {
        stopLoss: num(c.sl),
        takeProfit: num(c.tp),
      };
      if (c.price !== null) change.price = dec(c.price);
      const o = broker.modifyOrder(acc, c.order ?? '', change);
      return ack(RETCODE.DONE, 'Request completed', { order: o.id });
    }
    case 'REMOVE': {
      const o = broker.cancelOrder(acc, c.order ?? '');
      return ack(RETCODE.DONE, 'Request completed', { order: o.id });
    }
  }
}
