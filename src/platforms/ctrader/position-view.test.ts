import { describe, expect, it } from 'vitest';
import { ExecutionType, PositionStatus, TradeSide } from '../../protocols/ctrader/enums.js';
import type { ExecutionEventMsg, PositionMsg } from '../../protocols/ctrader/messages.js';
import { PositionView } from './position-view.js';

const pos = (positionId: string, volume: string, positionStatus: number = PositionStatus.OPEN): PositionMsg => ({
  positionId,
  tradeData: { symbolId: '1', volume, tradeSide: TradeSide.BUY },
  positionStatus,
  swap: '0',
});
const ev = (executionType: number, position?: PositionMsg): ExecutionEventMsg => ({
  ctidTraderAccountId: '7',
  executionType,
  ...(position ? { position } : {}),
});

/** A view trusted in session 1 holding position 10 at 100000 (0.10 lot of EURUSD). */
function trusted(): PositionView {
  const v = new PositionView();
  v.endRead(v.beginRead(1), [pos('10', '100000')], 1);
  return v;
}

describe('PositionView', () => {
  it('is not trusted before a read: every position is "read it"', () => {
    const v = new PositionView();
    v.apply(ev(ExecutionType.ORDER_FILLED, pos('10', '100000')));
    expect(v.get('10', 1)).toBeNull();
  });

  it('after a read, follows fills: a partial close lowers the volume, a close (status CLOSED) removes', () => {
    const v = trusted();
    expect(v.get('10', 1)).toEqual({ symbolId: '1', volume: '100000' });
    v.apply(ev(ExecutionType.ORDER_FILLED, pos('11', '30000')));
    expect(v.get('11', 1)).toEqual({ symbolId: '1', volume: '30000' });
    v.apply(ev(ExecutionType.ORDER_FILLED, pos('10', '60000')));
    expect(v.get('10', 1)?.volume).toBe('60000');
    // The simulator (and the closing deal) state the closed volume on a CLOSED position: the status decides.
    v.apply(ev(ExecutionType.ORDER_FILLED, pos('10', '60000', PositionStatus.CLOSED)));
    expect(v.get('10', 1)).toBeNull();
    expect(v.get('11', 1)).not.toBeNull();
  });

  it('is trusted only in the session it was read in', () => {
    const v = trusted();
    expect(v.get('10', 2)).toBeNull();
    expect(v.get('10', null)).toBeNull();
  });

  it('a read that crossed an event of the account, or was sent outside a session, does not make it trusted', () => {
    const crossed = trusted();
    const read = crossed.beginRead(1);
    crossed.apply(ev(ExecutionType.ORDER_FILLED, pos('10', '50000')));
    crossed.endRead(read, [pos('10', '100000')], 1);
    expect(crossed.get('10', 1)).toBeNull();

    const unsent = new PositionView();
    unsent.endRead(unsent.beginRead(null), [pos('10', '100000')], 1);
    expect(unsent.get('10', 1)).toBeNull();

    const across = new PositionView();
    across.endRead(across.beginRead(1), [pos('10', '100000')], 2);
    expect(across.get('10', 2)).toBeNull();
  });

  it('an event it cannot read, or a fill that names no position, leaves it untrusted until the next read', () => {
    const v = trusted();
    v.apply({ ...ev(ExecutionType.ORDER_FILLED), position: { positionId: '10' } as unknown as PositionMsg });
    expect(v.get('10', 1)).toBeNull();
    v.endRead(v.beginRead(1), [pos('10', '100000')], 1);
    expect(v.get('10', 1)).not.toBeNull();
    v.apply(ev(ExecutionType.ORDER_PARTIAL_FILL));
    expect(v.get('10', 1)).toBeNull();
  });

  it('events without a position that change none (an order accepted, a deposit) keep it trusted', () => {
    const v = trusted();
    v.apply(ev(ExecutionType.ORDER_ACCEPTED));
    v.apply(ev(ExecutionType.DEPOSIT_WITHDRAW));
    expect(v.get('10', 1)).not.toBeNull();
  });
});
