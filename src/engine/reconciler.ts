import type { Logger } from 'pino';
import type { Account } from '../domain/account.js';
import type { Position } from '../domain/types.js';
import type { Store } from '../store/store.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { CopyEngine } from './copy-engine.js';
import type { ReconcileResult } from './drift.js';
import { linkDrift, missingDrift, slaveView, taggedDrift, type PassView } from './drift-find.js';
import { DriftHealer } from './drift-heal.js';

/**
 * Compares what each Master holds, what our links say and what each Slave holds, and heals the difference
 * per policy: close orphans (a copy whose Master position is gone), open a missing copy (the planner skips
 * it as stale when it is too old), bring a copy that is bigger than our books down, adopt a late-arriving copy
 * of a timed-out write. A copy that disappeared while its Master position is still open was closed outside
 * the service: its link becomes `user_closed` and that Master position is never copied to that Slave again.
 */
/** Links and intents younger than this at the start of a pass are left to the next pass (see pass()). */
const YOUNG_MS = 5_000;
/** Masters reconciled at once by a scheduled pass over all of them. */
const RUN_ALL_LANES = 4;

export class Reconciler {
  private timer: NodeJS.Timeout | null = null;
  private readonly running = new Map<string, Promise<ReconcileResult>>();
  private readonly healer: DriftHealer;

  constructor(
    private readonly store: Store,
    private readonly adapters: AdapterRegistry,
    private readonly engine: CopyEngine,
    private readonly opts: {
      everyMs?: number;
      logger?: Logger | false;
      beforeRun?: (masterId: string) => Promise<void>;
      youngMs?: number;
      /** Which Masters' groups this process reconciles (a worker: those whose lease it holds). Default: all. */
      owns?: (masterAccountId: string) => boolean;
    } = {},
  ) {
    this.healer = new DriftHealer(store, adapters, engine, (msg, err) => this.log(msg, err));
  }

  start(): void {
    void this.runAll().catch((err: unknown) => this.log('reconcile failed', err));
    this.timer = setInterval(
      () => void this.runAll().catch((err: unknown) => this.log('reconcile failed', err)),
      this.opts.everyMs ?? 60_000,
    );
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.allSettled([...this.running.values()]);
  }

  /**
   * Every Master with a group, a few at a time: a pass reads all of a Master's Slaves, and a hundred passes
   * at once (the one at start) queued thousands of reads ahead of the first request.
   */
  async runAll(): Promise<ReconcileResult[]> {
    const owns = this.opts.owns ?? (() => true);
    const masters = (await this.store.accounts.masters()).filter((a) => a.groupId && owns(a.id));
    const results: ReconcileResult[] = new Array(masters.length);
    let next = 0;
    const lane = async () => {
      for (let i = next++; i < masters.length; i = next++) {
        // Asked again at its turn: a Master handed over to another worker meanwhile is that one's to reconcile.
        if (!owns(masters[i]!.id)) continue;
        results[i] = await this.run(masters[i]!, { dryRun: false });
      }
    };
    await Promise.all(Array.from({ length: Math.min(RUN_ALL_LANES, masters.length) }, lane));
    return results.filter((r) => r !== undefined);
  }

  /** Resolves once no real run of this Master is under way (a hand-over waits for it). */
  async idle(masterAccountId: string): Promise<void> {
    for (let r = this.running.get(masterAccountId); r; r = this.running.get(masterAccountId)) await r.catch(() => null);
  }

  /** One Master's group (or one Slave of it). Real runs of one Master never overlap. */
  run(master: Account, opts: { dryRun: boolean; onlySlave?: string }): Promise<ReconcileResult> {
    if (opts.dryRun) return this.pass(master, opts);
    const prev = this.running.get(master.id) ?? Promise.resolve(null);
    const next = prev.catch(() => null).then(() => this.pass(master, opts));
    this.running.set(master.id, next);
    void next
      .finally(() => {
        if (this.running.get(master.id) === next) this.running.delete(master.id);
      })
      .catch(() => undefined);
    return next;
  }

  private async pass(master: Account, opts: { dryRun: boolean; onlySlave?: string }): Promise<ReconcileResult> {
    if (this.opts.beforeRun) await this.opts.beforeRun(master.id);
    await this.engine.idle(master.id);
    const result: ReconcileResult = {
      masterAccountId: master.id,
      dryRun: opts.dryRun,
      drift: [],
      healed: [],
      unreachable: [],
    };
    const masterAdapter = await this.adapters.forAccount(master).catch(() => null);
    if (!masterAdapter) return { ...result, unreachable: [master.id] };
    let slaves = await this.engine.slavesOf(master);
    if (opts.onlySlave) slaves = slaves.filter((s) => s.account.id === opts.onlySlave);
    // Reads are not one snapshot: a copy made while this pass reads can show at the Slave (and in the store)
    // though the Master's read came before its fill. What is younger than the pass is judged on the next one.
    const passStart = Date.now();
    const young = (at: Date) => at.getTime() > passStart - (this.opts.youngMs ?? YOUNG_MS);
    const [masterPositions, items, unsettled, awaiting] = await Promise.all([
      masterAdapter.listPositions(),
      this.store.trades.masterItems(master.id),
      this.store.trades.unsettledIntents(),
      this.store.trades.apiTradesAwaitingMaster(),
    ]);
    // Not every link the Master ever had (they grow with age): the open ones and those of its positions open now;
    // a held Slave position's closed link is read below, when one is held that no link here names.
    const links = await this.store.trades.linksToReconcile(
      master.id,
      masterPositions.map((p) => p.id),
    );
    // A Master position of an order-route trade whose fan-out is still to come (the settle loop does it under the
    // same trade id): not a missing copy, or the reconciler would copy it a second time under its own trades.
    const awaitingIds = new Set(awaiting.filter((t) => t.masterAccountId === master.id).map((t) => t.id));
    const awaitingTags = new Set(awaiting.filter((t) => t.masterAccountId === master.id).map((t) => t.tag));
    const originOf = new Map(
      items.filter((i) => i.kind === 'position').map((i) => [i.itemId, i.originTradeId] as const),
    );
    const fanOutPending = (mp: Position) =>
      (mp.tag !== null && awaitingTags.has(mp.tag)) || awaitingIds.has(originOf.get(mp.id) ?? '');
    const masterOpen = new Map(masterPositions.map((p) => [p.id, p] as const));
    const view: PassView = {
      master,
      masterPositions,
      masterOpen,
      links,
      busy: new Set(unsettled.map((u) => `${u.intent.slaveAccountId}|${u.trade.masterPositionId ?? ''}`)),
      known: new Set(items.filter((i) => i.kind === 'position').map((i) => i.itemId)),
      fanOutPending,
      young,
      result,
    };
    for (const slave of slaves) {
      let slavePositions: Position[] | null = null;
      try {
        if (slave.adapter) slavePositions = await slave.adapter.listPositions();
      } catch {
        // Unreachable: not compared this time.
      }
      if (!slavePositions) {
        result.unreachable.push(slave.account.id);
        continue;
      }
      const s = slaveView(view, slave.account.id, slavePositions);
      linkDrift(view, s);
      await taggedDrift(this.store, view, s);
      await missingDrift(this.store, view, s);
    }

    if (!opts.dryRun && result.drift.length > 0) await this.healer.heal(master, result, masterOpen, links);
    return result;
  }

  private log(msg: string, err: unknown): void {
    if (this.opts.logger) this.opts.logger.error({ err }, msg);
  }
}
