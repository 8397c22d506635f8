import type { Logger } from 'pino';
import type { Account } from '../domain/account.js';
import { isIntentAction, opensCopy } from '../domain/intent-action.js';
import type { Position } from '../domain/types.js';
import type { Store } from '../store/store.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { CopyEngine } from './copy-engine.js';
import { ownCopyOf } from './copy-loop.js';
import type { Drift, ReconcileResult } from './drift.js';
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
    const busy = new Set(unsettled.map((u) => `${u.intent.slaveAccountId}|${u.trade.masterPositionId ?? ''}`));
    const known = new Set(items.filter((i) => i.kind === 'position').map((i) => i.itemId));

    for (const slave of slaves) {
      const sid = slave.account.id;
      if (!slave.adapter) {
        result.unreachable.push(sid);
        continue;
      }
      let slavePositions: Position[];
      try {
        slavePositions = await slave.adapter.listPositions();
      } catch {
        result.unreachable.push(sid);
        continue;
      }
      const held = new Map(slavePositions.map((p) => [p.id, p] as const));
      const mine = links.filter((l) => l.slaveAccountId === sid && l.kind === 'position');
      const openLinks = mine.filter((l) => l.open);
      const add = (d: Omit<Drift, 'masterAccountId' | 'slaveAccountId'>) =>
        result.drift.push({ ...d, masterAccountId: master.id, slaveAccountId: sid });

      for (const l of openLinks) {
        const sp = held.get(l.slavePositionId);
        const mp = masterOpen.get(l.masterPositionId);
        if (busy.has(`${sid}|${l.masterPositionId}`)) continue;
        if (!sp) {
          if (mp)
            add({
              kind: 'user_closed',
              masterPositionId: l.masterPositionId,
              slavePositionId: l.slavePositionId,
              detail:
                'the copy is gone at the Slave broker while its Master position is open: closed outside the service; it will not be copied again',
              action: 'mark_user_closed',
            });
          else
            add({
              kind: 'user_closed',
              masterPositionId: l.masterPositionId,
              slavePositionId: l.slavePositionId,
              detail: 'both the Master position and its copy are gone; the link is closed',
              action: 'mark_user_closed',
            });
          continue;
        }
        // The Master's broker no longer holds the position our link copies: whatever closed it (a missed event,
        // broker state lost or restored), the copy is exposure without a Master, so it is drift to close.
        if (!mp) {
          if (young(l.createdAt)) continue;
          add({
            kind: 'orphan',
            masterPositionId: l.masterPositionId,
            slavePositionId: l.slavePositionId,
            detail: `the Master position ${l.masterPositionId} is closed but its copy ${l.slavePositionId} (${sp.volume.toString()} ${sp.symbol}) is open`,
            action: 'close_orphan',
          });
          continue;
        }
        if (l.volume !== null && !sp.volume.eq(l.volume)) {
          const ours = l.volume;
          if (sp.volume.gt(ours))
            add({
              kind: 'volume_mismatch',
              masterPositionId: l.masterPositionId,
              slavePositionId: l.slavePositionId,
              detail: `the copy holds ${sp.volume.toString()}, our books ${ours.toString()}: the excess is closed`,
              action: 'reduce_volume',
            });
          else
            add({
              kind: 'volume_mismatch',
              masterPositionId: l.masterPositionId,
              slavePositionId: l.slavePositionId,
              detail: `the copy holds ${sp.volume.toString()}, our books ${ours.toString()}: reduced outside the service (or partly filled); exposure is never added back, the books follow the broker`,
              action: 'accept_volume',
            });
        }
      }

      // Copies at the Slave that carry one of our tags but no open link: a timed-out write that was applied late, or a duplicate.
      const named = new Set(mine.map((l) => l.slavePositionId));
      const unnamed = slavePositions.filter((p) => p.tag && !named.has(p.id)).map((p) => p.id);
      for (const l of await this.store.trades.linksOfSlavePositions(sid, unnamed)) {
        // Closed links of Master positions gone (open links are all read above): a copy our books closed.
        if (l.masterAccountId !== master.id || named.has(l.slavePositionId)) continue;
        mine.push(l);
        links.push(l);
      }
      const linked = new Set(mine.map((l) => l.slavePositionId));
      const tagged = slavePositions.filter((p) => p.tag && !linked.has(p.id));
      if (tagged.length > 0) {
        const intents = await this.store.trades.intentsByTags(
          sid,
          tagged.map((p) => p.tag!),
        );
        for (const p of tagged) {
          const intent = intents.find(
            (i) => i.tag === p.tag || (Array.isArray(i.prevTags) && (i.prevTags as string[]).includes(p.tag!)),
          );
          if (!intent) continue;
          // An earlier attempt's tag of a copy now confirmed and linked under a newer one: the write of an old
          // owner paused past its lease, landed after the new owner resent it. A duplicate whatever its age.
          const lateOriginal =
            intent.state === 'confirmed' && intent.tag !== p.tag && openLinks.some((l) => l.intentId === intent.id);
          if (!lateOriginal && young(intent.createdAt)) continue;
          const trade = await this.store.trades.tradeById(intent.tradeId);
          const mpId = trade?.masterPositionId ?? null;
          if (!trade || trade.masterAccountId !== master.id || busy.has(`${sid}|${mpId ?? ''}`)) continue;
          const alreadyCopied = openLinks.some((l) => l.masterPositionId === mpId);
          if (
            mpId &&
            masterOpen.has(mpId) &&
            !alreadyCopied &&
            !mine.some((l) => l.masterPositionId === mpId && l.closedReason === 'user_closed')
          ) {
            add({
              kind: 'unlinked_copy',
              masterPositionId: mpId,
              slavePositionId: p.id,
              detail: `position ${p.id} carries the tag of intent ${intent.id} but was never linked: adopted as the copy`,
              action: 'adopt_copy',
            });
          } else {
            add({
              kind: alreadyCopied ? 'duplicate_copy' : 'orphan',
              masterPositionId: mpId,
              slavePositionId: p.id,
              detail: `position ${p.id} carries the tag of intent ${intent.id} and ${alreadyCopied ? 'duplicates an existing copy' : 'its Master position is gone'}: closed`,
              action: 'close_duplicate',
            });
          }
        }
      }

      // Open Master positions without a copy and without a ledger row explaining why.
      for (const mp of masterPositions) {
        if (!known.has(mp.id) || busy.has(`${sid}|${mp.id}`) || fanOutPending(mp)) continue;
        if (mine.some((l) => l.masterPositionId === mp.id)) continue;
        if (result.drift.some((d) => d.slaveAccountId === sid && d.masterPositionId === mp.id)) continue;
        const history = await this.store.trades.intentsForMasterPosition(master.id, mp.id, sid);
        // A ledger row for this copy, whatever its state, means it is not missing: refused or skipped (explained),
        // or on its way (planned, sent, unresolved: the settle loop's), or confirmed (linked, or adopted above).
        const rowed = history.some((i) => isIntentAction(i.action) && opensCopy(i.action));
        if (rowed) continue;
        // One of our own copies seen on this Master (the watcher ignores it): healing it open would be the loop.
        if (mp.tag && (await ownCopyOf(this.store, master, mp.tag))) continue;
        add({
          kind: 'missing_copy',
          masterPositionId: mp.id,
          slavePositionId: null,
          detail: `the Master position ${mp.id} (${mp.volume.toString()} ${mp.symbol}) has no copy and no ledger row saying why: opened now if still fresh by the rule (else recorded as stale)`,
          action: 'open_missing',
        });
      }
    }

    if (!opts.dryRun && result.drift.length > 0) await this.healer.heal(master, result, masterOpen, links);
    return result;
  }

  private log(msg: string, err: unknown): void {
    if (this.opts.logger) this.opts.logger.error({ err }, msg);
  }
}
