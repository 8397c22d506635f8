import type { Decimal } from '../domain/decimal.js';
import type { Account } from '../domain/account.js';
import { newId } from '../domain/ids.js';
import type { Position, Side } from '../domain/types.js';
import type { Store } from '../store/store.js';
import type { PositionLink } from '../domain/ledger-types.js';
import type { NewEvent } from '../store/repos/events.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { MasterAction } from './actions.js';
import type { CopyEngine } from './copy-engine.js';
import type { Drift, ReconcileResult } from './drift.js';

/**
 * Heals the drift a reconcile pass found, per policy, each heal through the copy pipeline (or a link change)
 * with its events; a heal that fails is logged and the next one still runs.
 */
export class DriftHealer {
  constructor(
    private readonly store: Store,
    private readonly adapters: AdapterRegistry,
    private readonly engine: CopyEngine,
    private readonly log: (msg: string, err: unknown) => void,
  ) {}

  async heal(
    master: Account,
    result: ReconcileResult,
    masterOpen: Map<string, Position>,
    links: PositionLink[],
  ): Promise<void> {
    const userId = master.userId;
    await this.store.events.emit(result.drift.map((d) => driftFound(userId, master.id, d)));
    for (const d of result.drift) {
      try {
        const link =
          links.find(
            (l) =>
              l.slaveAccountId === d.slaveAccountId && l.kind === 'position' && l.slavePositionId === d.slavePositionId,
          ) ?? null;
        const healed = await this.healOne(master, d, masterOpen, link);
        if (!healed) continue;
        const tradeId = healed.tradeId;
        result.healed.push({ ...d, tradeId });
        await this.store.events.emit([
          {
            userId,
            accountId: d.slaveAccountId,
            type: 'reconcile.healed',
            payload: {
              kind: d.kind,
              action: d.action,
              detail: d.detail,
              tradeId,
              masterPositionId: d.masterPositionId,
              slavePositionId: d.slavePositionId,
            },
          },
        ]);
      } catch (err) {
        this.log(`healing ${d.kind} on ${d.slaveAccountId} failed`, err);
      }
    }
  }

  /** One drift healed by its policy: the trade a heal copied under, or null for `none` (nothing to do). */
  private async healOne(
    master: Account,
    d: Drift,
    masterOpen: Map<string, Position>,
    link: PositionLink | null,
  ): Promise<{ tradeId: string | null } | null> {
    switch (d.action) {
      case 'mark_user_closed':
        await this.store.trades.applyLinkChanges([
          {
            op: 'close',
            key: { slaveAccountId: d.slaveAccountId, kind: 'position', slavePositionId: d.slavePositionId! },
            reason: masterOpen.has(d.masterPositionId ?? '') ? 'user_closed' : 'closed_both',
          },
        ]);
        return { tradeId: null };
      case 'accept_volume': {
        const sp = await this.slavePosition(d);
        if (sp && link) await this.store.trades.setLinkVolume(link.id, sp.volume);
        return { tradeId: null };
      }
      case 'adopt_copy': {
        const sp = await this.slavePosition(d);
        if (sp)
          await this.store.trades.insertLink({
            id: newId('act'),
            kind: 'position',
            masterAccountId: master.id,
            masterPositionId: d.masterPositionId!,
            slaveAccountId: d.slaveAccountId,
            slavePositionId: sp.id,
            volume: sp.volume,
          });
        return { tradeId: null };
      }
      case 'close_orphan':
      case 'close_duplicate':
      case 'reduce_volume':
        return { tradeId: await this.closeExcess(master, d, link) };
      case 'open_missing': {
        const mp = masterOpen.get(d.masterPositionId!);
        if (!mp) return { tradeId: null };
        const action = this.syntheticAction(master, 'open', mp.id, mp, mp.volume, null);
        const r = await this.engine.copy(master, action, {
          source: 'reconciler',
          intentAction: 'heal_open',
          onlySlaves: new Set([d.slaveAccountId]),
        });
        await r.done;
        return { tradeId: r.tradeId };
      }
      case 'none':
        return null;
    }
  }

  /**
   * Closes at the Slave what no Master position stands for (an orphan, a duplicate) or what exceeds our books,
   * through the copy pipeline against the Slave position as it is now; null when it is gone already.
   */
  private async closeExcess(master: Account, d: Drift, link: PositionLink | null): Promise<string | null> {
    const sp = await this.slavePosition(d);
    if (!sp) return null;
    const target: PositionLink = link ?? {
      id: 'none',
      kind: 'position',
      masterAccountId: master.id,
      masterPositionId: d.masterPositionId ?? sp.id,
      slaveAccountId: d.slaveAccountId,
      slavePositionId: sp.id,
      intentId: null,
      volume: sp.volume,
      open: true,
      closedReason: null,
      createdAt: new Date(),
      closedAt: null,
    };
    const reduce = d.action === 'reduce_volume';
    const excess = reduce ? sp.volume.minus(link!.volume!) : sp.volume;
    const action = this.syntheticAction(
      master,
      reduce ? 'reduce' : 'close',
      d.masterPositionId ?? sp.id,
      sp,
      excess,
      sp.volume,
    );
    const r = await this.engine.copy(master, action, {
      source: 'reconciler',
      intentAction: reduce ? 'heal_reduce' : 'heal_close',
      onlySlaves: new Set([d.slaveAccountId]),
      targets: new Map([[d.slaveAccountId, [{ ...target, volume: sp.volume }]]]),
    });
    await r.done;
    return r.tradeId;
  }

  private async slavePosition(d: Drift): Promise<Position | null> {
    const acc = await this.store.accounts.byId(d.slaveAccountId);
    const adapter = acc ? await this.adapters.forAccount(acc).catch(() => null) : null;
    return (await adapter?.listPositions().catch(() => []))?.find((p) => p.id === d.slavePositionId) ?? null;
  }

  /** A heal goes through the same pipeline (ledger row, outcome, events) as the action it stands in for. */
  private syntheticAction(
    master: Account,
    kind: 'open' | 'close' | 'reduce',
    masterPositionId: string,
    p: Position,
    volume: Decimal,
    prevVolume: Decimal | null,
  ): MasterAction {
    const openedAt = Date.parse(p.openedAt);
    return {
      id: null,
      kind,
      masterAccountId: master.id,
      positionId: masterPositionId,
      orderId: null,
      symbol: p.symbol,
      side: p.side as Side,
      type: 'market',
      volume,
      prevVolume,
      price: kind === 'open' ? p.openPrice : p.currentPrice,
      stopLoss: p.stopLoss,
      takeProfit: p.takeProfit,
      // An open heals only while the Master position is fresh by the rule; closing is never too late.
      at: kind === 'open' && openedAt ? openedAt : this.engine.clock(),
      magic: p.magic ?? null,
      comment: p.comment ?? null,
      item: {
        accountId: master.id,
        kind: 'position',
        itemId: masterPositionId,
        symbol: p.symbol,
        side: p.side,
        orderType: 'market',
        volume: p.volume,
      },
    };
  }
}

const driftFound = (userId: string, masterId: string, d: Drift): NewEvent => ({
  userId,
  accountId: masterId,
  type: 'reconcile.drift_found',
  payload: {
    kind: d.kind,
    detail: d.detail,
    masterPositionId: d.masterPositionId,
    slavePositionId: d.slavePositionId,
    slaveAccountId: d.slaveAccountId,
    action: d.action,
  },
});
