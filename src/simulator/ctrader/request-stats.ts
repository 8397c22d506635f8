import { MESSAGE_NAME } from '../../protocols/ctrader/payload-types.js';

/** One payload type's requests so far: how many, and the simulator's own time spent handling them. */
export interface SimRequestCount {
  count: number;
  /** Synchronous handling time (ms): what the simulator's event loop spent on them, not the time on the wire. */
  busyMs: number;
}

export interface SimRequestStatsView {
  /** By message name (ProtoOATraderReq ...), heartbeats excluded. */
  requests: Record<string, SimRequestCount>;
  /** Requests refused with BLOCKED_PAYLOAD_TYPE (over the per-connection rate). */
  blocked: number;
}

/**
 * Requests received by the cTrader front end, per payload type, over all connections: a bench reads it before and
 * after a window to see where a round's requests (and the simulator's time) went, rather than guessing.
 */
export class SimRequestStats {
  private readonly byType = new Map<number, SimRequestCount>();
  private blocked = 0;

  record(payloadType: number, busyMs: number): void {
    const c = this.byType.get(payloadType) ?? { count: 0, busyMs: 0 };
    c.count += 1;
    c.busyMs += busyMs;
    this.byType.set(payloadType, c);
  }

  recordBlocked(): void {
    this.blocked += 1;
  }

  view(): SimRequestStatsView {
    const requests: Record<string, SimRequestCount> = {};
    for (const [pt, c] of this.byType)
      requests[MESSAGE_NAME[pt] ?? String(pt)] = { count: c.count, busyMs: Math.round(c.busyMs * 10) / 10 };
    return { requests, blocked: this.blocked };
  }
}
