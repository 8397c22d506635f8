import { toWireDeal, toWireOrder, toWirePosition } from '../../protocols/bridge/convert.js';
import type {
  RequestErrorMsg,
  SnapshotMsg,
  SnapshotRequestMsg,
  SymbolMsg,
  SymbolRequestMsg,
} from '../../protocols/bridge/schemas.js';
import type { SimBrokerApi } from '../contract.js';
import { dealLike } from './transactions.js';

/**
 * The EA's answers to reads: PositionsTotal/OrdersTotal loops and HistorySelect(dealsSince, now) for a
 * snapshot, SymbolInfo* for a symbol. A read fault injected on the broker is played as the terminal being busy
 * (a request_error with the broker's retry hint) or as no answer at all.
 */
export function answerSnapshot(
  broker: SimBrokerApi,
  acc: string,
  m: SnapshotRequestMsg,
  seq: number,
): SnapshotMsg | RequestErrorMsg | null {
  const refused = readFault(broker, acc, m.id);
  if (refused !== undefined) return refused;
  const st = broker.state(acc);
  const from = new Date(m.dealsSince);
  return {
    type: 'snapshot',
    id: m.id,
    balance: st.balance.toFixed(),
    equity: st.equity.toFixed(),
    currency: st.currency,
    positions: broker.positions(acc).map(toWirePosition),
    orders: broker.orders(acc).map(toWireOrder),
    history: broker
      .orders(acc, { includeHistory: true, from })
      .filter((o) => o.status !== 'pending')
      .map(toWireOrder),
    deals: broker.deals(acc, { from }).map((d) => toWireDeal(dealLike(d))),
    seq,
  };
}

export function answerSymbol(broker: SimBrokerApi, m: SymbolRequestMsg): SymbolMsg {
  const s = broker.instrument(m.symbol);
  const q = s ? broker.quote(s.symbol) : null;
  return {
    type: 'symbol',
    id: m.id,
    symbol: m.symbol,
    found: s !== null,
    volumeMin: s?.minVolume.toFixed() ?? null,
    volumeMax: s?.maxVolume.toFixed() ?? null,
    volumeStep: s?.volumeStep.toFixed() ?? null,
    contractSize: s?.contractSize.toFixed() ?? null,
    tickSize: s?.tickSize.toFixed() ?? null,
    digits: s?.digits ?? null,
    bid: q?.bid.toFixed() ?? null,
    ask: q?.ask.toFixed() ?? null,
  };
}

/** undefined: no fault; null: no answer; else the refusal. */
function readFault(broker: SimBrokerApi, acc: string, id: string): RequestErrorMsg | null | undefined {
  const f = broker.faults.take('read', acc);
  if (!f) return undefined;
  if (f.kind === 'rate_limit')
    return { type: 'request_error', id, code: 'busy', message: 'terminal busy', retryAfterSec: f.retryAfterSec ?? 1 };
  if (f.kind === 'timeout_after_apply' || f.kind === 'timeout_before_apply' || f.kind === 'delay') return null;
  return {
    type: 'request_error',
    id,
    code: 'failed',
    message: f.message ?? `read failed (${f.kind})`,
    retryAfterSec: null,
  };
}
