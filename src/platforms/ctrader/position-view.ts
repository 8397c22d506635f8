import { ExecutionType, PositionStatus } from '../../protocols/ctrader/enums.js';
import type { ExecutionEventMsg, PositionMsg } from '../../protocols/ctrader/messages.js';
import { SessionView } from './session-view.js';

/** What a close needs of an open position: its symbol and its whole volume on the wire (cents of units). */
export interface PositionTarget {
  symbolId: string;
  volume: string;
}

/**
 * One account's open positions as the server last told us: a reconcile answer, then every execution event of the
 * account on the connection applied on top (the position in an event is its whole state, not a delta). A close
 * reads its position's symbol and volume here instead of asking the server first: with one rate window shared by
 * every account on a connection, that read doubled a mass close's requests and made each close wait a second
 * behind the others' reads.
 *
 * Trusted only within the account session (`CTraderConnection.accountSession`) a reconcile was read in: the server
 * pushes an account's execution events only while it is authorised on the connection, so any loss of that (a
 * reconnect, an account disconnect, a token refusal) may have hidden changes, and the next session starts
 * untrusted until a reconcile. An event the view cannot read, and a reconcile that crossed events of the account
 * (which of the two is newer is unknown), leave it untrusted too. Untrusted, or a position it does not hold, and
 * the caller reads as before: the view only ever saves a read, it never answers "no such position".
 *
 * Staleness, compared with the read it replaces: a reconcile answer describes the server one way-trip before it
 * arrives, and the close then needs another way-trip (plus any wait in the rate window) to reach the server, so
 * a change in that round trip went unseen. The view, read when the close is made, holds every event the server
 * sent more than one way-trip earlier (one TCP stream, in order), and the close reaches the server one way-trip
 * later (plus the same wait): the same round trip unseen, never more. A change in it is what it always was: the
 * close of the old volume is refused or closes less, and the caller sees the outcome.
 */
export class PositionView extends SessionView<PositionMsg, PositionTarget> {
  protected idOf(p: PositionMsg): string {
    return String(p.positionId);
  }

  protected target(p: PositionMsg): PositionTarget | null | undefined {
    return openTarget(p);
  }

  /** Every execution event of the account, in the order received (our own answers included). */
  apply(ev: ExecutionEventMsg): void {
    this.changed();
    const p = ev.position;
    if (!p) {
      // A fill always changes a position; one that does not say which leaves the view unknowable.
      if (ev.executionType === ExecutionType.ORDER_FILLED || ev.executionType === ExecutionType.ORDER_PARTIAL_FILL)
        this.distrust();
      return;
    }
    this.applyOne(p);
  }
}

/** The position's target when open with volume, null when it is not (closed, created, in error), undefined when unreadable. */
function openTarget(p: PositionMsg): PositionTarget | null | undefined {
  const id = p?.positionId;
  const symbolId = p?.tradeData?.symbolId;
  const volume = p?.tradeData?.volume;
  if (id === undefined || id === null || symbolId === undefined || symbolId === null) return undefined;
  if (volume === undefined || volume === null || !/^\d+$/.test(String(volume))) return undefined;
  if (p.positionStatus !== PositionStatus.OPEN || BigInt(String(volume)) === 0n) return null;
  return { symbolId: String(symbolId), volume: String(volume) };
}
