import type { Order } from '../../domain/types.js';
import type { BrokerEvent } from '../adapter.js';
import { type AccountSnapshot, diffSnapshots } from '../polling-watcher.js';
import type { MtStream, MtStreamEvents, MtStreamSnapshot, MtStreamUpdate } from './stream-client.js';

const MAX_FINALS = 1000;

/** Where an account's Master events come from now: the stream, or REST polls while the stream is not there. */
export type MtStreamState = { mode: 'streaming' } | { mode: 'polling'; reason: string };

export interface StreamingWatcherDeps {
  /** Opens the account's stream; it reports through the events it is given until closed. */
  open(events: MtStreamEvents): MtStream;
  /** The account's state over REST: the fallback while the stream is down. */
  snapshot(): Promise<AccountSnapshot>;
  /** Final state of a pending order that left the book, over REST, when the stream did not say. */
  finalOrder(order: Order): Promise<Order | null>;
  /** Poll period while the stream is down (and the grace before the first poll). */
  pollIntervalMs: number;
  onError?(err: unknown): void;
  /** Told on every change between streaming and polling (the first poll after the stream failed is "degraded"). */
  onState?(state: MtStreamState): void;
}

/**
 * Master events for platform A from MetaApi's stream, with REST polling only while the stream is down. Every
 * source yields a whole account state (a synchronization, the last state plus an update, a poll) and every
 * state is diffed against the one before, in arrival order: a resynchronization after a reconnect therefore
 * reports exactly what changed while the socket was away, nothing twice. The first state is the baseline and
 * reports nothing, as with polling.
 */
export class StreamingWatcher {
  private readonly listeners = new Set<(ev: BrokerEvent) => void>();
  private stream: MtStream | null = null;
  private last: AccountSnapshot | null = null;
  /** Orders the stream reported final; saves a REST read per order that left the book. */
  private readonly finals = new Map<string, Order>();
  private chain: Promise<void> = Promise.resolve();
  private live = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private state: MtStreamState['mode'] | null = null;
  /** Why the stream is not there, for the degraded report: its last error or the reason it went down. */
  private reason = 'the stream has not synchronized yet';

  constructor(private readonly deps: StreamingWatcherDeps) {}

  /** Whether the stream holds a synchronized picture of the account now (tests, health). */
  get streaming(): boolean {
    return this.live;
  }

  /** Why events come from polls now; null while the stream is live (or nothing ran yet). */
  get degradedReason(): string | null {
    return this.state === 'polling' ? this.reason : null;
  }

  add(listener: (ev: BrokerEvent) => void): () => void {
    this.listeners.add(listener);
    if (this.stopped) {
      this.stopped = false;
      this.stream = this.deps.open({
        synchronized: (s) => this.onSynchronized(s),
        update: (u) => this.onUpdate(u),
        down: (reason) => {
          this.reason = reason;
          this.onDown();
        },
        error: (err) => {
          this.reason = err instanceof Error ? err.message : String(err);
          this.deps.onError?.(err);
        },
      });
      this.schedulePoll();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  stop(): void {
    this.stopped = true;
    this.state = null;
    this.live = false;
    this.last = null;
    this.finals.clear();
    this.stream?.close();
    this.stream = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Resolves once every state received so far has been diffed and its events delivered. */
  settled(): Promise<void> {
    return this.chain;
  }

  private remember(orders: Order[]): void {
    for (const o of orders) this.finals.set(o.id, o);
    // Most final orders never left our pending list (market orders); keep only the recent ones.
    for (const id of this.finals.keys()) {
      if (this.finals.size <= MAX_FINALS) break;
      this.finals.delete(id);
    }
  }

  private onSynchronized(s: MtStreamSnapshot): void {
    this.remember(s.historyOrders);
    this.live = true;
    this.report({ mode: 'streaming' });
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.enqueue(() => ({ positions: s.positions, orders: s.orders }));
  }

  private onUpdate(u: MtStreamUpdate): void {
    this.remember(u.historyOrders);
    this.enqueue((prev) => {
      if (!prev) return null;
      const positions = new Map(prev.positions.map((p) => [p.id, p]));
      for (const id of u.removedPositionIds) positions.delete(id);
      for (const p of u.updatedPositions) positions.set(p.id, p);
      const orders = new Map(prev.orders.map((o) => [o.id, o]));
      for (const id of u.completedOrderIds) orders.delete(id);
      for (const o of u.updatedOrders) orders.set(o.id, o);
      return { positions: [...positions.values()], orders: [...orders.values()] };
    });
  }

  private onDown(): void {
    this.live = false;
    this.schedulePoll();
  }

  private schedulePoll(): void {
    if (this.stopped || this.live || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.stopped || this.live) return;
      this.report({ mode: 'polling', reason: this.reason });
      this.deps
        .snapshot()
        // A poll answered after the stream came back is older than the stream's picture: dropped.
        .then((snap) => this.enqueue(() => (this.live ? null : snap)))
        .catch((err: unknown) => this.deps.onError?.(err))
        .finally(() => this.schedulePoll());
    }, this.deps.pollIntervalMs);
    // Neither the stream's fallback nor its wait may keep a process alive on its own.
    this.timer.unref();
  }

  private report(s: MtStreamState): void {
    if (this.state === s.mode) return;
    this.state = s.mode;
    this.deps.onState?.(s);
  }

  /** States are applied strictly in arrival order; `next` sees the state before it (null: nothing to apply). */
  private enqueue(next: (prev: AccountSnapshot | null) => AccountSnapshot | null): void {
    this.chain = this.chain
      .then(async () => {
        if (this.stopped) return;
        const prev = this.last;
        const state = next(prev);
        if (!state) return;
        this.last = state;
        if (!prev) return;
        const events = await diffSnapshots(prev, state, async (o) => this.finals.get(o.id) ?? this.deps.finalOrder(o));
        for (const ev of events) {
          if (this.stopped) return;
          for (const l of this.listeners) l(ev);
        }
      })
      .catch((err: unknown) => this.deps.onError?.(err));
  }
}
