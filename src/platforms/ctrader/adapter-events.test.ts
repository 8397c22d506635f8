import { afterEach, describe, expect, it } from 'vitest';
import type { BrokerEvent } from '../adapter.js';
import { ExecutionType, PositionStatus, TradeSide } from '../../protocols/ctrader/enums.js';
import type { Envelope } from '../../protocols/ctrader/messages.js';
import { PT } from '../../protocols/ctrader/payload-types.js';
import { CTraderAdapter } from './adapter.js';
import type { CTraderConnection } from './connection.js';

/** A connection that answers the symbol reads and hands the test the adapter's account-event listener. */
function stubConnection() {
  let push: ((env: Envelope) => void) | null = null;
  const conn = {
    onAccountEvent: (_ctid: string, listener: (env: Envelope) => void) => {
      push = listener;
      return () => {
        push = null;
      };
    },
    ensureAccount: async () => undefined,
    accountRequest: async (_ctid: string, payloadType: number): Promise<Envelope[]> => {
      if (payloadType === PT.SYMBOLS_LIST_REQ)
        return [{ payloadType: PT.SYMBOLS_LIST_RES, payload: { symbol: [{ symbolId: '1', symbolName: 'EURUSD' }] } }];
      if (payloadType === PT.SYMBOL_BY_ID_REQ)
        return [
          {
            payloadType: PT.SYMBOL_BY_ID_RES,
            payload: { symbol: [{ symbolId: '1', digits: 5, pipPosition: 4, lotSize: '10000000' }] },
          },
        ];
      throw new Error(`not stubbed: payload type ${payloadType}`);
    },
  };
  return { conn: conn as unknown as CTraderConnection, push: (env: Envelope) => push!(env) };
}

const opened = (positionId: string, openTimestamp: string): Envelope => ({
  payloadType: PT.EXECUTION_EVENT,
  payload: {
    ctidTraderAccountId: '7',
    executionType: ExecutionType.ORDER_FILLED,
    position: {
      positionId,
      tradeData: { symbolId: '1', volume: '100000', tradeSide: TradeSide.BUY, openTimestamp },
      positionStatus: PositionStatus.OPEN,
      swap: '0',
      price: 1.08,
    },
  },
});

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
});

describe('a cTrader execution event the adapter cannot read', () => {
  it('is dropped alone: no unhandled rejection, and the events after it still reach the listeners', async () => {
    process.on('unhandledRejection', onUnhandled);
    const { conn, push } = stubConnection();
    const adapter = new CTraderAdapter({ connection: conn, ctidTraderAccountId: '7', timeoutMs: 1_000 });
    const seen: BrokerEvent[] = [];
    adapter.subscribe((ev) => seen.push(ev));
    // An open time past what a Date can hold: reading the event throws (RangeError: Invalid time value).
    push(opened('100', '99999999999999999'));
    push(opened('101', String(Date.UTC(2026, 0, 2))));
    // Before: the event chain stayed rejected, so every later event of the account was skipped, and the rejection
    // was unhandled (the process ends on one by default).
    await expect.poll(() => seen.map((e) => (e.kind === 'position_opened' ? e.position?.id : e.kind))).toEqual(['101']);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(unhandled).toEqual([]);
    await adapter.close();
  });
});
