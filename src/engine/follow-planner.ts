import type { Decimal } from '../domain/decimal.js';
import { isEligibleSlave } from '../domain/account.js';
import { PANIC_CLOSED } from '../domain/panic-job.js';
import { correlationTag } from '../domain/correlation.js';
import { copyLevels, copySide, onTickGrid, ruleForSymbol, slaveSymbol } from '../domain/copy-mapping.js';
import { isHeal, isOrderAction } from '../domain/intent-action.js';
import { quoteToAccount } from '../domain/quote-currency.js';
import { sizeVolume } from '../domain/sizing.js';
import type { InstrumentSpec } from '../domain/types.js';
import type { LinkKind, PositionLink } from '../domain/ledger-types.js';
import type { MasterAction } from './actions.js';
import { proportionalClose } from './partial-close.js';
import type { PreTradeContext } from './planner.js';
import type { ActionPlanInput, EngineSkip, IntentDraft, PlanSlave, Planned } from './action-planner.js';

/** A Slave of a follow-up action with what planning it needs: its links to the Master item, and its spec when it has an open one. */
export interface FollowSlave<S extends PlanSlave> {
  slave: S;
  links: PositionLink[];
  spec: InstrumentSpec | null;
}

export const linkKindOf = (action: MasterAction): LinkKind => (isOrderAction(action.kind) ? 'order' : 'position');

/** Ledger rows of a follow-up (close, reduce, SL/TP, pending order change, cancel, fill): one per open linked copy. */
export function planFollowRows<S extends PlanSlave>(
  input: ActionPlanInput,
  slaves: Array<FollowSlave<S>>,
): Planned<S>[] {
  const { action, tradeId, rowAction } = input;
  const out: Planned<S>[] = [];
  for (const { slave, links, spec } of slaves) {
    const { account, rule } = slave;
    const mapped = slaveSymbol(rule, action.symbol);
    const base = (tag: string, targetId: string | null) => ({
      id: input.newIntentId(),
      tradeId,
      slaveAccountId: account.id,
      tag,
      action: rowAction,
      symbol: mapped,
      side: copySide(rule, action.side),
      targetId,
    });
    const open = links.filter((l) => l.open);
    if (open.length === 0) {
      out.push(noOpenCopy(input, slave, links, base));
      continue;
    }
    for (const link of open) {
      const row = base(
        correlationTag({ tradeId, accountId: account.id, action: `${rowAction}:${link.slavePositionId}` }),
        link.slavePositionId,
      );
      // Object.assign, not `{ ...row, state }`: built per Slave of a follow-up; see outcome-ledger.ts on spreads.
      const skip = (reason: string, detail: string): Planned<S> => ({
        row: Object.assign({}, row, { state: 'skipped' as const, skipReason: `${reason}: ${detail}` }),
        slave,
        send: false,
        link,
      });
      const send = (r: Partial<IntentDraft>): Planned<S> => ({
        row: Object.assign({}, row, { state: 'planned' as const }, r),
        slave,
        send: true,
        link,
      });
      if (!slave.adapter) {
        out.push(skip('broker_unavailable', 'the Slave broker adapter could not be opened'));
        continue;
      }
      const onGrid = (v: Decimal | null) => onTickGrid(v, spec);
      const [sl, tp] = copyLevels(rule, action.stopLoss, action.takeProfit);
      out.push(planLinked({ input, slave, link, spec, mapped, side: row.side, sl, tp, onGrid, skip, send }));
    }
  }
  return out;
}

type RowBase = (tag: string, targetId: string | null) => Omit<IntentDraft, 'state'>;

/** A Slave without an open copy of the Master's item: one skipped row saying why (closed by hand, by a panic-close, never opened). */
function noOpenCopy<S extends PlanSlave>(
  input: ActionPlanInput,
  slave: S,
  links: PositionLink[],
  base: RowBase,
): Planned<S> {
  const { action, tradeId, rowAction } = input;
  const kind = linkKindOf(action);
  const masterItemId = (kind === 'order' ? action.orderId : action.positionId)!;
  const userClosed = links.some((l) => l.closedReason === 'user_closed');
  const panicClosed = !userClosed && links.some((l) => l.closedReason === PANIC_CLOSED);
  const reason: EngineSkip = userClosed
    ? 'user_closed'
    : panicClosed
      ? 'already_closed_by_panic'
      : 'no_linked_position';
  const detail = userClosed
    ? 'the copy was closed outside the service; it is not copied again'
    : panicClosed
      ? `a panic-close of this account closed its copy of the Master's ${kind} ${masterItemId} before this action`
      : `no open copy of the Master's ${kind} ${masterItemId} on this account (see the open's ledger row)`;
  return {
    row: Object.assign(base(correlationTag({ tradeId, accountId: slave.account.id, action: rowAction }), null), {
      state: 'skipped' as const,
      skipReason: `${reason}: ${detail}`,
    }),
    slave,
    send: false,
    link: null,
  };
}

/** What planning one open linked copy needs: the row makers, the mapped symbol and side, the copied levels on grid. */
interface LinkPlan<S extends PlanSlave> {
  input: ActionPlanInput;
  slave: S;
  link: PositionLink;
  spec: InstrumentSpec | null;
  mapped: string;
  side: IntentDraft['side'];
  sl: Decimal | null;
  tp: Decimal | null;
  onGrid: (v: Decimal | null) => Decimal | null;
  skip: (reason: string, detail: string) => Planned<S>;
  send: (r: Partial<IntentDraft>) => Planned<S>;
}

/** The row for one open linked copy, by what the Master did. */
function planLinked<S extends PlanSlave>(p: LinkPlan<S>): Planned<S> {
  const { action } = p.input;
  switch (action.kind) {
    case 'close':
    case 'order_cancelled':
      return p.send({ plannedVolume: p.link.volume });
    case 'reduce':
      return planReduce(p);
    case 'modify': {
      const { rule } = p.slave;
      if (!rule.copyStopLoss && !rule.copyTakeProfit)
        return p.skip('sltp_not_copied', 'the rule copies neither stop loss nor take profit');
      return p.send({
        stopLoss: rule.copyStopLoss ? p.onGrid(p.sl) : null,
        takeProfit: rule.copyTakeProfit ? p.onGrid(p.tp) : null,
        plannedVolume: p.link.volume,
      });
    }
    case 'order_modified':
      return planOrderModified(p);
    case 'order_filled':
      return planOrderFilled(p);
    default:
      return p.skip('not_supported', `action ${action.kind}`);
  }
}

/** A partial close: the same share of the copy, on the Slave's volume step; a rest below its minimum closes it all. */
function planReduce<S extends PlanSlave>(p: LinkPlan<S>): Planned<S> {
  const { action, rowAction } = p.input;
  if (!p.spec || !p.link.volume || !action.prevVolume)
    return p.skip(
      'unknown_symbol',
      `no instrument data or volume for ${p.mapped}: the proportional part cannot be sized`,
    );
  const pc = proportionalClose({
    masterBefore: action.prevVolume,
    closed: action.volume,
    slaveVolume: p.link.volume,
    step: p.spec.volumeStep,
    minVolume: p.spec.minVolume,
  });
  if (pc.kind === 'skip') return p.skip(pc.reason, pc.detail);
  // A rest below the broker minimum cannot stay open: this reduce becomes the full close (ledger says so).
  if (pc.kind === 'full')
    return p.send({
      action: isHeal(rowAction) ? 'heal_close' : 'close',
      plannedVolume: p.link.volume,
      skipReason: pc.detail ? `rounded_to_full_close: ${pc.detail}` : null,
    });
  return p.send({ plannedVolume: pc.volume });
}

/** A pending order changed: its price and levels on the Slave's grid, its volume sized again by the rule. */
function planOrderModified<S extends PlanSlave>(p: LinkPlan<S>): Planned<S> {
  const { master, action } = p.input;
  const { account, rule } = p.slave;
  if (!p.spec) return p.skip('unknown_symbol', `the Slave's broker does not list ${p.mapped}`);
  const entry = p.onGrid(action.price);
  const sized = sizeVolume(
    ruleForSymbol(rule, action.symbol),
    {
      masterVolume: action.volume,
      masterBalance: master.balance,
      masterEquity: master.equity,
      slaveBalance: account.balance,
      slaveEquity: account.equity,
      entryPrice: entry,
      stopLoss: rule.copyStopLoss ? p.onGrid(p.sl) : null,
      quoteToAccount: quoteToAccount(p.mapped, account.currency, entry),
    },
    p.spec,
  );
  return p.send({
    plannedPrice: p.onGrid(action.price),
    plannedVolume: sized.ok ? sized.volume : null,
    stopLoss: p.onGrid(p.sl),
    takeProfit: p.onGrid(p.tp),
  });
}

/**
 * A pending order filled. A fill adds exposure: a Slave that may not take any (paused, locked, disconnected) or
 * that the risk guard refuses only has its pending copy cancelled, so it cannot fill later on its own.
 */
function planOrderFilled<S extends PlanSlave>(p: LinkPlan<S>): Planned<S> {
  const { master, action, rowAction } = p.input;
  const { account, rule } = p.slave;
  const refuse = (reason: string): Planned<S> =>
    p.send({ action: 'order_cancelled', skipReason: `${reason}; the pending copy is cancelled instead of filled` });
  if (!isEligibleSlave(account)) return refuse(`slave_not_eligible: account status is ${account.status}`);
  const fill = (volume: Decimal | null) =>
    p.send({
      plannedVolume: volume,
      stopLoss: rule.copyStopLoss ? p.onGrid(p.sl) : null,
      takeProfit: rule.copyTakeProfit ? p.onGrid(p.tp) : null,
    });
  const volume = p.link.volume;
  if (!p.spec || !volume) return fill(volume);
  const ctx: PreTradeContext = {
    master,
    slave: account,
    rule,
    action: rowAction,
    symbol: p.mapped,
    side: p.side,
    type: 'market',
    volume,
    price: action.price,
    stopLoss: rule.copyStopLoss ? p.onGrid(p.sl) : null,
    spec: p.spec,
  };
  const planned = fill(volume);
  planned.check = {
    ctx,
    decide: (d) => (d.ok ? fill(d.volume ?? volume) : refuse(`${d.code}: ${d.message}`)),
  };
  return planned;
}
