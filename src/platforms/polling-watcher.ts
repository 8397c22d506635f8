import type { Decimal } from '../domain/decimal.js';
import type { Order, Position } from '../domain/types.js';
import type { BrokerEvent } from './adapter.js';

export interface AccountSnapshot {
  positions: Position[];
  /** Pending orders only (SL/TP child orders excluded). */
  orders: Order[];
}

export interface PollingWatcherDeps {
  snapshot(): Promise<AccountSnapshot>;
  /** Final state of a pending order that left the book: filled or cancelled. Null when unknown. */
  finalOrder(order: Order): Promise<Order | null>;
  /** Milliseconds between polls; a function is re-read every tick so it can follow served rate limits. */
  intervalMs: number | (() => number);
  onError?(err: unknown): void;
}

const same = (a: Decimal | null, b: Decimal | null) => (a === null || b === null ? a === b : a.eq(b));

/**
 * For platforms without a push channel (TradeLocker's public REST API, MetaApi REST): account activity is
 * polled and diffed. The first poll is the baseline and emits nothing: events describe changes, not the
 * state found at start. Only a vanished pending order costs an extra (history) read.
 */
export class PollingWatcher {
  private readonly listeners = new Set<(ev: BrokerEvent) => void>();
  private last: AccountSnapshot | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private stopped = false;

  constructor(private readonly deps: PollingWatcherDeps) {}

  add(listener: (ev: BrokerEvent) => void): () => void {
    this.listeners.add(listener);
    if (!this.running) {
      this.running = true;
      this.stopped = false;
      this.schedule(0);
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  stop(): void {
    this.stopped = true;
    this.running = false;
    this.last = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** One poll, exposed so tests (and a reconnect) can force a diff now. */
  async tick(): Promise<void> {
    const next = await this.deps.snapshot();
    const prev = this.last;
    this.last = next;
    if (!prev) return;
    for (const ev of await diffSnapshots(prev, next, this.deps.finalOrder)) {
      if (this.stopped) return;
      for (const l of this.listeners) l(ev);
    }
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.tick()
        .catch((err: unknown) => this.deps.onError?.(err))
        .finally(() =>
          this.schedule(typeof this.deps.intervalMs === 'function' ? this.deps.intervalMs() : this.deps.intervalMs),
        );
    }, ms);
    // Polling must never keep a process alive on its own.
    this.timer.unref();
  }
}

export async function diffSnapshots(
  prev: AccountSnapshot,
  next: AccountSnapshot,
  finalOrder: (o: Order) => Promise<Order | null>,
): Promise<BrokerEvent[]> {
  const at = new Date().toISOString();
  const out: BrokerEvent[] = [];
  const prevPos = new Map(prev.positions.map((p) => [p.id, p]));
  const nextPos = new Map(next.positions.map((p) => [p.id, p]));
  for (const p of next.positions) {
    const old = prevPos.get(p.id);
    if (!old) out.push({ kind: 'position_opened', position: p, at });
    else if (p.volume.lt(old.volume))
      out.push({ kind: 'position_reduced', position: p, closedVolume: old.volume.minus(p.volume), at });
    else if (!p.volume.eq(old.volume) || !same(p.stopLoss, old.stopLoss) || !same(p.takeProfit, old.takeProfit)) {
      out.push({ kind: 'position_modified', position: p, at });
    }
  }
  for (const old of prev.positions) {
    if (!nextPos.has(old.id)) out.push({ kind: 'position_closed', position: old, closedVolume: old.volume, at });
  }

  const prevOrd = new Map(prev.orders.map((o) => [o.id, o]));
  const nextOrd = new Map(next.orders.map((o) => [o.id, o]));
  for (const o of next.orders) {
    const old = prevOrd.get(o.id);
    if (!old) out.push({ kind: 'order_placed', order: o, at });
    else if (
      !same(o.price, old.price) ||
      !o.volume.eq(old.volume) ||
      !same(o.stopLoss, old.stopLoss) ||
      !same(o.takeProfit, old.takeProfit)
    ) {
      out.push({ kind: 'order_modified', order: o, at });
    }
  }
  for (const old of prev.orders) {
    if (nextOrd.has(old.id)) continue;
    const final = await finalOrder(old).catch(() => null);
    if (final?.status === 'filled') out.push({ kind: 'order_filled', order: final, at });
    else out.push({ kind: 'order_cancelled', order: final ?? { ...old, status: 'cancelled' }, at });
  }
  return out;
}
