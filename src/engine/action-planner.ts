import type { Decimal } from '../domain/decimal.js';
import type { Account } from '../domain/account.js';
import type { CopyRule } from '../domain/copy-rule.js';
import { correlationTag } from '../domain/correlation.js';
import { copySide, slaveSymbol } from '../domain/copy-mapping.js';
import type { IntentAction } from '../domain/intent-action.js';
import type { IntentState } from '../domain/intent.js';
import type { InstrumentSpec, Side } from '../domain/types.js';
import type { NewIntent, PositionLink } from '../domain/ledger-types.js';
import type { MasterAction } from './actions.js';
import type { PlannedCopy, PreTradeContext, PreTradeDecision } from './planner.js';
import type { SizingRecord } from '../domain/receipts/sizing-record.js';

/** Skip codes beyond the domain's sizing ones; each appears in the ledger as `code: detail`. */
export type EngineSkip =
  | 'no_linked_position'
  | 'user_closed'
  | 'sltp_not_copied'
  | 'already_copied'
  | 'closed_before_copy'
  /** The Slave's copy was closed by a panic-close job of that Slave: the Master's later close has nothing to do. */
  | 'already_closed_by_panic';

/** A Slave as the planner sees it; `adapter` only says whether its broker could be opened. */
export interface PlanSlave {
  account: Account;
  rule: CopyRule;
  adapter: object | null;
}

export type IntentDraft = NewIntent & {
  id: string;
  tag: string;
  action: IntentAction;
  symbol: string;
  side: Side;
  state: IntentState;
};

export interface Planned<S extends PlanSlave = PlanSlave> {
  row: IntentDraft;
  slave: S;
  /** Set when the row is to be sent. */
  send: boolean;
  link: PositionLink | null;
  /** Rows that add exposure are decided by the risk guard's pre-trade check: the engine asks it, `decide` gives the row. */
  check?: { ctx: PreTradeContext; decide: (d: PreTradeDecision) => Planned<S> };
}

export interface ActionPlanInput {
  master: Account;
  action: MasterAction;
  tradeId: string;
  /** The rows' action: the Master's kind, or the reconciler's heal. */
  rowAction: IntentAction;
  newIntentId: () => string;
}

/**
 * A paused or locked Master (by the user, the risk guard or a panic-close) is not copied from, even when trades
 * keep arriving from its terminal: every Slave gets a skipped row. Closes and reductions still follow (they
 * only take risk away), so this is asked only of actions that add exposure. Null when the Master may be copied.
 */
export function planMasterRefusal<S extends PlanSlave>(input: ActionPlanInput, slaves: S[]): Planned<S>[] | null {
  const { master } = input;
  if (master.status === 'connected' || master.status === 'disconnected') return null;
  return planSkipEvery(
    input,
    slaves,
    `master_not_eligible: the Master is ${master.status}${master.statusReason ? ` (${master.statusReason})` : ''}`,
  );
}

/** A skipped row for every Slave, all with one reason (`code: detail`): nothing is sent, the ledger says why. */
export function planSkipEvery<S extends PlanSlave>(
  input: ActionPlanInput,
  slaves: S[],
  skipReason: string,
): Planned<S>[] {
  const { action, tradeId, rowAction } = input;
  return slaves.map((slave) => ({
    row: {
      id: input.newIntentId(),
      tradeId,
      slaveAccountId: slave.account.id,
      tag: correlationTag({ tradeId, accountId: slave.account.id, action: rowAction }),
      action: rowAction,
      symbol: slaveSymbol(slave.rule, action.symbol),
      side: copySide(slave.rule, action.side),
      targetId: null,
      state: 'skipped',
      skipReason,
    },
    slave,
    send: false,
    link: null,
  }));
}

/**
 * Ledger rows of an action that adds exposure, from `planOpen`'s decisions (one per Slave, same order).
 * `userClosed`: Slaves whose copy of this Master position was closed by hand or by a panic-close, with the skip
 * code that says which; it is never copied to them again.
 */
export function planAddingRows<S extends PlanSlave>(
  input: ActionPlanInput,
  slaves: S[],
  plan: PlannedCopy[],
  specs: Array<InstrumentSpec | null>,
  userClosed: ReadonlyMap<string, 'user_closed' | 'already_closed_by_panic'>,
  /** False when no pre-trade check is wired: the rows are final, no `check` is built for them. */
  checked = true,
): Planned<S>[] {
  const { master, action, tradeId, rowAction } = input;
  return plan.map((p, i) => {
    const slave = slaves[i]!;
    const refPrice = action.type === 'market' ? action.price : p.kind === 'send' ? p.price : null;
    const row = {
      id: input.newIntentId(),
      tradeId,
      slaveAccountId: slave.account.id,
      tag: p.tag,
      action: rowAction,
      symbol: p.symbol,
      side: p.side,
      targetId: null,
    };
    const skip = (reason: string, detail: string): Planned<S> => ({
      row: { ...row, state: 'skipped', skipReason: `${reason}: ${detail}` },
      slave,
      send: false,
      link: null,
    });
    if (p.kind === 'skip') {
      const skipped = skip(p.reason, p.detail);
      if (p.sizing) skipped.row.sizingInputs = p.sizing;
      return skipped;
    }
    if (!slave.adapter) return skip('broker_unavailable', 'the Slave broker adapter could not be opened');
    const closedBy = userClosed.get(slave.account.id);
    if (closedBy)
      return skip(
        closedBy,
        closedBy === 'user_closed'
          ? 'the copy of this Master position was closed outside the service; it is not copied again'
          : 'the copy of this Master position was closed by a panic-close of this account; it is not copied again',
      );
    // Spelled out rather than spread from `row`: built once per Slave of a fan-out, on the path to the first send.
    const send = (volume: Decimal, sizing: SizingRecord = p.sizing): Planned<S> => ({
      row: {
        id: row.id,
        tradeId,
        slaveAccountId: row.slaveAccountId,
        tag: row.tag,
        action: rowAction,
        symbol: row.symbol,
        side: row.side,
        targetId: null,
        plannedVolume: volume,
        plannedPrice: refPrice,
        stopLoss: p.stopLoss,
        takeProfit: p.takeProfit,
        state: 'planned',
        sizingInputs: sizing,
      },
      slave,
      send: true,
      link: null,
    });
    const spec = specs[i];
    if (!spec || !checked) return send(p.volume);
    const ctx: PreTradeContext = {
      master,
      slave: slave.account,
      rule: slave.rule,
      action: rowAction,
      symbol: p.symbol,
      side: p.side,
      type: p.type,
      volume: p.volume,
      price: p.price ?? action.price,
      stopLoss: p.stopLoss,
      spec,
    };
    const planned = send(p.volume);
    planned.check = {
      ctx,
      decide: (d) =>
        d.ok
          ? d.volume
            ? send(d.volume, { ...p.sizing, guard: { volume: d.volume } })
            : send(p.volume)
          : {
              row: {
                ...row,
                plannedVolume: p.volume,
                state: 'denied',
                skipReason: `${d.code}: ${d.message}`,
                outcome: { kind: 'denied', code: d.code, message: d.message },
                sizingInputs: { ...p.sizing, guard: { denied: d.code } },
              },
              slave,
              send: false,
              link: null,
            },
    };
    return planned;
  });
}
