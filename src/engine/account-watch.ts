import type { Account } from '../domain/account.js';
import { mayBeOurTag } from '../domain/correlation.js';
import type { MasterItem } from '../domain/ledger-types.js';
import type { Order, Position } from '../domain/types.js';
import type { BrokerAdapter, BrokerEvent } from '../platforms/adapter.js';
import type { Store } from '../store/store.js';
import { diffOrder, diffPosition, orderItem, positionItem, type MasterAction } from './actions.js';
import type { CopyEngine } from './copy-engine.js';
import { reviveIfLate } from './order-recovery.js';
import { ignoreOwnCopy, tagHolders, type TagHolders } from './copy-loop.js';
import { replayDealsSince } from './history-replay.js';
import type { WatcherOptions } from './watch-options.js';
import { retryTopic } from './rate-limit.js';
import { WatchRetry } from './watch-retry.js';

type Job = { kind: 'event'; ev: BrokerEvent } | { kind: 'diff'; reason: string };

/** One Master's queue: its broker events and diffs, turned into copy actions one at a time, in order. */
export class AccountWatch {
  private queue: Job[] = [];
  private running: Promise<void> | null = null;
  private unsubscribe: (() => void) | null = null;
  private poll: NodeJS.Timeout | null = null;
  private recheck: NodeJS.Timeout | null = null;
  private readonly retry: WatchRetry;
  private stopped = false;

  constructor(
    readonly accountId: string,
    private readonly adapter: BrokerAdapter,
    private readonly store: Store,
    private readonly engine: CopyEngine,
    private readonly opts: WatcherOptions,
    private readonly log: (msg: string, err: unknown) => void,
  ) {
    this.retry = new WatchRetry(opts.retryMs ?? 500, () => this.enqueue({ kind: 'diff', reason: 'retry' }));
  }

  start(): void {
    // Subscribe before the diff: an event during the diff queues behind it and is then a no-op or the next step.
    if (this.adapter.subscribe) {
      this.unsubscribe = this.adapter.subscribe((ev) => this.enqueue({ kind: 'event', ev }));
      const recheckMs = this.opts.recheckMs ?? 3000;
      if (recheckMs > 0) {
        this.recheck = setTimeout(() => this.enqueue({ kind: 'diff', reason: 'recheck' }), recheckMs);
        this.recheck.unref();
      }
    } else {
      const ms = Math.max(
        this.opts.pollMs ?? 1000,
        Math.ceil(2000 / Math.max(1, this.adapter.capabilities.rateLimitPerSecond)),
      );
      this.poll = setInterval(() => {
        if (!this.queue.some((j) => j.kind === 'diff')) this.enqueue({ kind: 'diff', reason: 'poll' });
      }, ms);
      this.poll.unref();
    }
    this.enqueue({ kind: 'diff', reason: 'start' });
  }

  enqueue(job: Job): void {
    if (this.stopped) return;
    this.supersedeRetries(job);
    this.queue.push(job);
    if (!this.running)
      this.running = this.drain().finally(() => {
        this.running = null;
      });
  }

  /**
   * The Master closed a position (cancelled a pending order) whose copies may still wait out a broker's 429: they
   * stop waiting now, so the close is not held behind them for up to a rule's max delay and nothing opens late.
   */
  private supersedeRetries(job: Job): void {
    if (job.kind !== 'event') return;
    const { ev } = job;
    if (ev.kind === 'position_closed' && ev.position)
      this.engine.retrying.supersede(
        retryTopic(this.accountId, 'position', ev.position.id),
        `the Master closed position ${ev.position.id} before the copy could be sent`,
      );
    else if (ev.kind === 'order_cancelled' && ev.order)
      this.engine.retrying.supersede(
        retryTopic(this.accountId, 'order', ev.order.id),
        `the Master cancelled order ${ev.order.id} before the copy could be sent`,
      );
  }

  isIdle(): boolean {
    return this.queue.length === 0 && !this.running;
  }

  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.poll) clearInterval(this.poll);
    if (this.recheck) clearTimeout(this.recheck);
    this.retry.stop();
    this.queue = [];
    await this.idle();
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && !this.stopped) {
      const job = this.queue.shift()!;
      try {
        const master = await this.store.accounts.byId(this.accountId);
        // A removed Master's row stays for the history; the watcher lets go of it on its next scan.
        if (!master || master.role !== 'master' || master.removedAt) continue;
        if (job.kind === 'event') await this.onEvent(master, job.ev);
        else await this.diff(master, job.reason);
        this.retry.succeeded();
      } catch (err) {
        this.log(`watcher job failed on ${this.accountId}`, err);
        if (!this.stopped) this.retry.failed();
      }
    }
  }

  private async run(master: Account, actions: MasterAction[], catchUp = false): Promise<void> {
    for (const a of actions) {
      // In order per Master item: a follow-up plans from the links its item's earlier copies write. The Master's
      // other items do not wait for them (one slow Slave broker must not hold every Slave's next copy).
      await this.engine.itemIdle(master.id, a);
      await this.engine.copy(master, a, { source: 'watcher', catchUp });
    }
  }

  private async onEvent(master: Account, ev: BrokerEvent): Promise<void> {
    const at = Date.parse(ev.at) || this.engine.clock();
    if (ev.position) {
      const p = ev.position;
      // A new tagged position: its item and what carries its tag together, the one round trip to the store before
      // the record while the copy waits (a known item makes the tag's reads unneeded, rare for an opening). On the
      // embedded store the item is in memory, and another tool's tag needs no read: then none at all.
      let known: MasterItem | null;
      let tagged: TagHolders | undefined;
      if (ev.kind === 'position_opened' && p.tag) {
        const r = await this.store.trades.itemAndTag(master.id, 'position', p.id, mayBeOurTag(p.tag) ? p.tag : null);
        known = r.item;
        tagged = { trade: r.trade, intent: r.intent };
      } else known = await this.store.trades.masterItem(master.id, 'position', p.id);
      if (ev.kind === 'position_closed')
        return this.run(master, diffPosition(master.id, known, null, at, p.currentPrice));
      if (!known || !known.open) {
        if (known) return;
        if (await this.registeredElsewhere(master, p, [], tagged)) return;
        return this.run(master, diffPosition(master.id, null, p, at));
      }
      // A pending fill folding into a netting position shows as a volume change followed by order_filled: the fill copies it.
      if (this.fillQueuedFor(p.id))
        return this.store.trades.upsertMasterItem(positionItem(master.id, p, known.seq, true, known.originTradeId));
      return this.run(
        master,
        diffPosition(master.id, known, p, at, ev.kind === 'position_reduced' ? p.currentPrice : null),
      );
    }
    if (ev.order) {
      const o = ev.order;
      // A market order is not a pending order to copy: its fill shows as a position event, and a market order
      // the broker takes and then cancels or rejects (after our timeout) must copy nothing at all.
      if (o.type === 'market') return;
      const known = await this.store.trades.masterItem(master.id, 'order', o.id);
      if (ev.kind === 'order_placed' || ev.kind === 'order_modified') {
        if (!known && o.tag && mayBeOurTag(o.tag) && (await this.store.trades.tradeByTag(o.tag))) {
          // Sent through our order route, which copies it itself; remember it for what follows.
          const t = (await this.store.trades.tradeByTag(o.tag))!;
          await reviveIfLate(this.store, t);
          return this.store.trades.upsertMasterItem(orderItem(master.id, o, 0, true, t.id));
        }
        if (!known && (await ignoreOwnCopy(this.store, master, 'order', o, undefined, this.log))) return;
        return this.run(master, diffOrder(master.id, known, o, null, at));
      }
      return this.run(master, diffOrder(master.id, known, null, o, at));
    }
  }

  /**
   * A new Master position that is not a new trade to copy: one of our own copies (a loop), opened by our order
   * route (its tag is a trade of ours), or the fill of a pending order we know (order_filled follows and links
   * the Slaves' fills).
   */
  private async registeredElsewhere(
    master: Account,
    p: Position,
    fills: Order[] = [],
    /** What carries the position's tag, when already read. */
    tagged?: TagHolders,
  ): Promise<boolean> {
    // Read once: the order route records its trade before it sends the Master's order, so no later read finds one.
    const held = p.tag ? (tagged ?? (await tagHolders(this.store, p.tag))) : undefined;
    const t = held?.trade ?? null;
    // First: the fill of an ignored pending copy must not become an open Master item either.
    if (held && !t && (await ignoreOwnCopy(this.store, master, 'position', p, held, this.log))) return true;
    const fromFill = fills.find((o) => o.positionId === p.id);
    if (fromFill || this.fillQueuedFor(p.id)) {
      const origin = (await this.store.trades.masterItems(master.id, { openOnly: true })).find(
        (i) => i.kind === 'order' && (i.itemId === fromFill?.id || (p.tag !== null && i.tag === p.tag)),
      );
      await this.store.trades.upsertMasterItem(positionItem(master.id, p, 0, true, origin?.originTradeId ?? null));
      return true;
    }
    if (t) {
      await this.store.trades.upsertMasterItem(positionItem(master.id, p, 0, true, t.id));
      // An order-route trade: the route fans it out, or the settle loop does if the route never finished.
      await reviveIfLate(this.store, t);
      return true;
    }
    return false;
  }

  private fillQueuedFor(positionId: string): boolean {
    return this.queue.some(
      (j) => j.kind === 'event' && j.ev.kind === 'order_filled' && j.ev.order?.positionId === positionId,
    );
  }

  /**
   * Broker state now vs what the store knows: the actions that were missed (restart, reconnect, polling). On a start,
   * a resync or a requested diff, the deals since the Master's history cursor are replayed first (history-replay.ts),
   * and the cursor moves only once the whole diff went through.
   */
  private async diff(master: Account, reason: string): Promise<void> {
    const catchUp = reason === 'start';
    const [positions, pending, known] = await Promise.all([
      this.adapter.listPositions(),
      this.adapter.listOrders(),
      this.store.trades.masterItems(master.id, { openOnly: true }),
    ]);
    // Not on a poll (every second or so), nor on the recheck after a start: a position opened in the subscribe race
    // and still open is the diff's, one opened and closed within those seconds is the next resync's replay.
    const cursor =
      reason === 'poll' || reason === 'recheck'
        ? null
        : await replayDealsSince(this.store, this.adapter, this.engine, master, new Set(positions.map((p) => p.id)));
    await this.diffState(master, positions, pending, known, catchUp);
    if (cursor) await this.store.masterCursors.advance(master.id, cursor);
  }

  private async diffState(
    master: Account,
    positions: Position[],
    pending: Order[],
    known: MasterItem[],
    catchUp: boolean,
  ): Promise<void> {
    const now = this.engine.clock();
    const knownOrders = known.filter((k) => k.kind === 'order');
    const knownPositions = new Map(known.filter((k) => k.kind === 'position').map((k) => [k.itemId, k] as const));
    const pendingById = new Map(pending.map((o) => [o.id, o] as const));
    const gone = knownOrders.filter((k) => !pendingById.has(k.itemId));
    const history = gone.length > 0 ? await this.adapter.listOrders({ includeHistory: true }) : [];
    const fills = history.filter((o) => o.status === 'filled' && gone.some((k) => k.itemId === o.id));

    // New positions first: a filled pending registers its position before the fill links the Slaves' copies.
    for (const p of positions) {
      if (knownPositions.has(p.id)) continue;
      const earlier = await this.store.trades.masterItem(master.id, 'position', p.id);
      if (earlier) continue;
      if (await this.registeredElsewhere(master, p, fills)) continue;
      await this.run(master, diffPosition(master.id, null, p, Date.parse(p.openedAt) || now), catchUp);
    }
    for (const k of gone)
      await this.run(
        master,
        diffOrder(master.id, k, null, history.find((o) => o.id === k.itemId) ?? null, now),
        catchUp,
      );
    for (const o of pending) {
      const k = knownOrders.find((x) => x.itemId === o.id) ?? null;
      if (!k) {
        const earlier = await this.store.trades.masterItem(master.id, 'order', o.id);
        if (earlier) continue;
        const t = o.tag ? await this.store.trades.tradeByTag(o.tag) : null;
        if (t) {
          await reviveIfLate(this.store, t);
          await this.store.trades.upsertMasterItem(orderItem(master.id, o, 0, true, t.id));
          continue;
        }
        if (await ignoreOwnCopy(this.store, master, 'order', o, undefined, this.log)) continue;
      }
      await this.run(master, diffOrder(master.id, k, o, null, k ? now : Date.parse(o.createdAt) || now), catchUp);
    }
    const byId = new Map(positions.map((p) => [p.id, p] as const));
    for (const k of knownPositions.values())
      await this.run(master, diffPosition(master.id, k, byId.get(k.itemId) ?? null, now), catchUp);
  }
}
