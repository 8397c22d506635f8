import type { Account } from '../domain/account.js';
import type { CopyRule } from '../domain/copy-rule.js';
import { ruleForSymbol, slaveSymbol } from '../domain/copy-mapping.js';
import { PANIC_CLOSED } from '../domain/panic-job.js';
import { addsRisk } from '../domain/intent-action.js';
import { newId } from '../domain/ids.js';
import type { BrokerAdapter } from '../platforms/adapter.js';
import type { Store } from '../store/store.js';
import type { MasterAction } from './actions.js';
import { deniedByCapability } from './capability-check.js';
import { planOpen, type PreTradeCheck, type SlaveContext } from './planner.js';
import {
  planAddingRows,
  planMasterRefusal,
  planSkipEvery,
  type ActionPlanInput,
  type Planned as PlannedRow,
} from './action-planner.js';
import { linkKindOf, planFollowRows, type FollowSlave } from './follow-planner.js';
import { needsMarket, slaveMarket } from './slave-market.js';
import type { CopyOptions } from './copy-options.js';
import type { SpecCache } from './spec-cache.js';

export interface Slave {
  account: Account;
  rule: CopyRule;
  adapter: BrokerAdapter | null;
}

export type Planned = PlannedRow<Slave>;

/**
 * The planning half of the copy engine: reads what the pure planners need (links, specs, quotes), lets them
 * decide, and asks the risk guard about each row that adds exposure.
 */
export class PlanInputs {
  constructor(
    private readonly store: Store,
    private readonly specs: SpecCache,
    private readonly clock: () => number,
    private readonly preTradeCheck: () => PreTradeCheck | undefined,
  ) {}

  // ---- planning: the engine reads what the planner needs (links, specs, quotes), the planner decides -----

  async plan(
    master: Account,
    action: MasterAction,
    tradeId: string,
    slaves: Slave[],
    opts: CopyOptions,
  ): Promise<Planned[]> {
    // The last word before a row is recorded: a send the Slave's platform cannot do is skipped with the reason.
    // The verdict depends only on the platform's capabilities and what the row asks (action, SL, TP): asked once
    // per kind of row and platform, not once per Slave (a fan-out's Slaves mostly share both). Looked up by the
    // capabilities, the action, then which of SL/TP the row carries: a key string built per row cost 0.3 us.
    const verdicts = new Map<object, Map<string, Array<ReturnType<typeof deniedByCapability> | undefined>>>();
    return (await this.planActions(master, action, tradeId, slaves, opts)).map((p) => {
      let denied: ReturnType<typeof deniedByCapability> = null;
      if (p.send && p.slave.adapter) {
        const caps = p.slave.adapter.capabilities;
        const { row } = p;
        let byAction = verdicts.get(caps);
        if (!byAction) verdicts.set(caps, (byAction = new Map()));
        let byLevels = byAction.get(row.action);
        if (!byLevels) byAction.set(row.action, (byLevels = []));
        const levels = (row.stopLoss != null ? 2 : 0) + (row.takeProfit != null ? 1 : 0);
        const known = byLevels[levels];
        if (known !== undefined) denied = known;
        else {
          denied = deniedByCapability(
            { action: row.action, type: action.type, stopLoss: row.stopLoss, takeProfit: row.takeProfit },
            caps,
          );
          byLevels[levels] = denied;
        }
      }
      return denied
        ? { ...p, row: { ...p.row, state: 'skipped', skipReason: `${denied.reason}: ${denied.detail}` }, send: false }
        : p;
    });
  }

  private async planActions(
    master: Account,
    action: MasterAction,
    tradeId: string,
    slaves: Slave[],
    opts: CopyOptions,
  ): Promise<Planned[]> {
    const input = {
      master,
      action,
      tradeId,
      rowAction: opts.intentAction ?? action.kind,
      newIntentId: () => newId('int'),
    };
    if (opts.skipEvery !== undefined) return planSkipEvery(input, slaves, opts.skipEvery);
    if (addsRisk(action.kind)) return this.planAdding(input, slaves);
    if (action.kind === 'order_filled' && !opts.targets) {
      // A Slave that does not copy pending orders copies the position the fill opened, at market, when it opens.
      const atMarket = slaves.filter((s) => !s.rule.copyPendingOrders);
      const rest = slaves.filter((s) => s.rule.copyPendingOrders);
      const opened =
        atMarket.length === 0
          ? []
          : await this.planAdding(
              { ...input, action: { ...action, type: 'market' }, rowAction: 'open_on_fill' },
              atMarket,
            );
      return [...opened, ...(await this.planFollow(input, rest, opts))];
    }
    return this.planFollow(input, slaves, opts);
  }

  private async planFollow(input: ActionPlanInput, slaves: Slave[], opts: CopyOptions): Promise<Planned[]> {
    const { master, action } = input;
    const kind = linkKindOf(action);
    const all = opts.targets
      ? null
      : await this.store.trades.linksOfMaster(
          master.id,
          (kind === 'order' ? action.orderId : action.positionId)!,
          kind,
        );
    const follow: Array<FollowSlave<Slave>> = [];
    for (const slave of slaves) {
      const links = opts.targets?.get(slave.account.id) ?? all!.filter((l) => l.slaveAccountId === slave.account.id);
      // Only a Slave with an open copy needs the instrument (a read at its broker).
      const spec =
        slave.adapter && links.some((l) => l.open)
          ? await this.specs.get(slave.adapter, slaveSymbol(slave.rule, action.symbol))
          : null;
      follow.push({ slave, links, spec });
    }
    // One by one: the risk guard sees each fill after the ones before it.
    const out: Planned[] = [];
    for (const p of planFollowRows(input, follow)) out.push(await this.decide(p));
    return out;
  }

  private async planAdding(input: ActionPlanInput, slaves: Slave[]): Promise<Planned[]> {
    const refused = planMasterRefusal(input, slaves);
    if (refused) return refused;
    const { master, action } = input;
    const contexts: SlaveContext[] = [];
    const waits: Array<Promise<void>> = [];
    for (const s of slaves) {
      const symbol = slaveSymbol(s.rule, action.symbol);
      const ctx: SlaveContext = { account: s.account, rule: s.rule, spec: null };
      if (s.adapter) {
        const known = this.specs.now(s.adapter, symbol);
        if (known) ctx.spec = known;
        else
          waits.push(
            this.specs.get(s.adapter, symbol).then((spec) => {
              ctx.spec = spec;
            }),
          );
        // The rule for this symbol: an override may bound slippage or size where the rule does not.
        const rule = ruleForSymbol(s.rule, action.symbol);
        if (needsMarket(rule, action.type))
          waits.push(
            slaveMarket(s.adapter, s.account, rule, symbol, action.type).then((m) => {
              Object.assign(ctx, m);
            }),
          );
      }
      contexts.push(ctx);
    }
    if (waits.length > 0) await Promise.all(waits);
    const plan = planOpen(
      {
        tradeId: input.tradeId,
        masterAccount: master,
        symbol: action.symbol,
        side: action.side,
        type: action.type,
        volume: action.volume,
        price: action.type === 'market' ? null : action.price,
        stopLoss: action.stopLoss,
        takeProfit: action.takeProfit,
        at: action.at,
        fillPrice: action.type === 'market' ? action.price : null,
        magic: action.magic,
        comment: action.comment,
      },
      contexts,
      this.clock(),
    );
    // Never copy a Master position again to a Slave whose copy of it was closed by hand or by a panic-close.
    const userClosed = new Map<string, 'user_closed' | 'already_closed_by_panic'>();
    if (action.kind === 'increase' && action.positionId)
      for (const l of await this.store.trades.linksOfMaster(master.id, action.positionId)) {
        if (l.closedReason === 'user_closed') userClosed.set(l.slaveAccountId, 'user_closed');
        else if (l.closedReason === PANIC_CLOSED) userClosed.set(l.slaveAccountId, 'already_closed_by_panic');
      }
    const check = this.preTradeCheck();
    const rows = planAddingRows(
      input,
      slaves,
      plan,
      contexts.map((c) => c.spec),
      userClosed,
      check !== undefined,
    );
    // No risk guard: every row stands as planned, without a promise per row (1000 Slaves were 1000 awaits).
    return check ? Promise.all(rows.map((p) => this.decide(p))) : rows;
  }

  /** The risk guard's pre-trade check on a row that adds exposure (absent = everything passes). */
  private async decide(p: Planned): Promise<Planned> {
    if (!p.check) return p;
    const check = this.preTradeCheck();
    return p.check.decide(check ? await check(p.check.ctx) : { ok: true });
  }
}
