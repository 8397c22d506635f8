import { Decimal } from '../domain/decimal.js';
import { isEligibleSlave, type Account } from '../domain/account.js';
import type { CopyRule } from '../domain/copy-rule.js';
import { correlationTag } from '../domain/correlation.js';
import { copyLevels, copySide, onTickGrid, slaveSymbol } from '../domain/copy-mapping.js';
import { isHeal, isOrderAction, type IntentAction } from '../domain/intent-action.js';
import type { IntentState } from '../domain/intent.js';
import { quoteToAccount } from '../domain/quote-currency.js';
import { sizeVolume } from '../domain/sizing.js';
import type { InstrumentSpec, Side } from '../domain/types.js';
import type { LinkKind, LinkRow, NewIntent } from '../store/repos/trades.js';
import type { MasterAction } from './actions.js';
import { proportionalClose } from './partial-close.js';
import type { PlannedCopy, PreTradeContext, PreTradeDecision } from './planner.js';

/** Skip codes beyond the domain's sizing ones; each appears in the ledger as `code: detail`. */
export type EngineSkip = 'no_linked_position' | 'user_closed' | 'sltp_not_copied' | 'already_copied';

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
  link: LinkRow | null;
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

const str = (d: Decimal | null | undefined) => (d === null || d === undefined ? null : d.toString());

/**
 * A paused or locked Master (by the user, the risk guard or a panic-close) is not copied from, even when trades
 * keep arriving from its terminal: every Slave gets a skipped row. Closes and reductions still follow (they
 * only take risk away), so this is asked only of actions that add exposure. Null when the Master may be copied.
 */
export function planMasterRefusal<S extends PlanSlave>(input: ActionPlanInput, slaves: S[]): Planned<S>[] | null {
  const { master, action, tradeId, rowAction } = input;
  if (master.status === 'connected' || master.status === 'disconnected') return null;
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
      skipReason: `master_not_eligible: the Master is ${master.status}${master.statusReason ? ` (${master.statusReason})` : ''}`,
    },
    slave,
    send: false,
    link: null,
  }));
}

/**
 * Ledger rows of an action that adds exposure, from `planOpen`'s decisions (one per Slave, same order).
 * `userClosed`: Slaves whose copy of this Master position was closed by hand; it is never copied to them again.
 */
export function planAddingRows<S extends PlanSlave>(
  input: ActionPlanInput,
  slaves: S[],
  plan: PlannedCopy[],
  specs: Array<InstrumentSpec | null>,
  userClosed: ReadonlySet<string>,
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
    if (p.kind === 'skip') return skip(p.reason, p.detail);
    if (!slave.adapter) return skip('broker_unavailable', 'the Slave broker adapter could not be opened');
    if (userClosed.has(slave.account.id))
      return skip(
        'user_closed',
        'the copy of this Master position was closed outside the service; it is not copied again',
      );
    const send = (volume: Decimal): Planned<S> => ({
      row: {
        ...row,
        plannedVolume: volume.toString(),
        plannedPrice: str(refPrice),
        stopLoss: str(p.stopLoss),
        takeProfit: str(p.takeProfit),
        state: 'planned',
      },
      slave,
      send: true,
      link: null,
    });
    const spec = specs[i];
    if (!spec) return send(p.volume);
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
    return {
      ...send(p.volume),
      check: {
        ctx,
        decide: (d) =>
          d.ok
            ? send(d.volume ?? p.volume)
            : {
                row: {
                  ...row,
                  plannedVolume: p.volume.toString(),
                  state: 'denied',
                  skipReason: `${d.code}: ${d.message}`,
                  outcome: { kind: 'denied', code: d.code, message: d.message },
                },
                slave,
                send: false,
                link: null,
              },
      },
    };
  });
}

/** A Slave of a follow-up action with what planning it needs: its links to the Master item, and its spec when it has an open one. */
export interface FollowSlave<S extends PlanSlave> {
  slave: S;
  links: LinkRow[];
  spec: InstrumentSpec | null;
}

export const linkKindOf = (action: MasterAction): LinkKind => (isOrderAction(action.kind) ? 'order' : 'position');

/** Ledger rows of a follow-up (close, reduce, SL/TP, pending order change, cancel, fill): one per open linked copy. */
export function planFollowRows<S extends PlanSlave>(
  input: ActionPlanInput,
  slaves: Array<FollowSlave<S>>,
): Planned<S>[] {
  const { master, action, tradeId, rowAction } = input;
  const kind = linkKindOf(action);
  const masterItemId = (kind === 'order' ? action.orderId : action.positionId)!;
  const out: Planned<S>[] = [];
  for (const { slave, links, spec } of slaves) {
    const { account, rule, adapter } = slave;
    const mapped = slaveSymbol(rule, action.symbol);
    const open = links.filter((l) => l.open);
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
    if (open.length === 0) {
      const userClosed = links.some((l) => l.closedReason === 'user_closed');
      const reason: EngineSkip = userClosed ? 'user_closed' : 'no_linked_position';
      const detail = userClosed
        ? 'the copy was closed outside the service; it is not copied again'
        : `no open copy of the Master's ${kind} ${masterItemId} on this account (see the open's ledger row)`;
      out.push({
        row: {
          ...base(correlationTag({ tradeId, accountId: account.id, action: rowAction }), null),
          state: 'skipped',
          skipReason: `${reason}: ${detail}`,
        },
        slave,
        send: false,
        link: null,
      });
      continue;
    }
    for (const link of open) {
      const row = base(
        correlationTag({ tradeId, accountId: account.id, action: `${rowAction}:${link.slavePositionId}` }),
        link.slavePositionId,
      );
      const skip = (reason: string, detail: string): Planned<S> => ({
        row: { ...row, state: 'skipped', skipReason: `${reason}: ${detail}` },
        slave,
        send: false,
        link,
      });
      const send = (r: Partial<IntentDraft>): Planned<S> => ({
        row: { ...row, state: 'planned', ...r },
        slave,
        send: true,
        link,
      });
      if (!adapter) {
        out.push(skip('broker_unavailable', 'the Slave broker adapter could not be opened'));
        continue;
      }
      const onGrid = (v: Decimal | null) => onTickGrid(v, spec);
      const [sl, tp] = copyLevels(rule, action.stopLoss, action.takeProfit);
      switch (action.kind) {
        case 'close':
        case 'order_cancelled':
          out.push(send({ plannedVolume: link.volume }));
          break;
        case 'reduce': {
          if (!spec || !link.volume || !action.prevVolume) {
            out.push(
              skip(
                'unknown_symbol',
                `no instrument data or volume for ${mapped}: the proportional part cannot be sized`,
              ),
            );
            break;
          }
          const pc = proportionalClose({
            masterBefore: action.prevVolume,
            closed: action.volume,
            slaveVolume: new Decimal(link.volume),
            step: spec.volumeStep,
            minVolume: spec.minVolume,
          });
          if (pc.kind === 'skip') out.push(skip(pc.reason, pc.detail));
          // A rest below the broker minimum cannot stay open: this reduce becomes the full close (ledger says so).
          else if (pc.kind === 'full')
            out.push(
              send({
                action: isHeal(rowAction) ? 'heal_close' : 'close',
                plannedVolume: link.volume,
                skipReason: pc.detail ? `rounded_to_full_close: ${pc.detail}` : null,
              }),
            );
          else out.push(send({ plannedVolume: pc.volume.toString() }));
          break;
        }
        case 'modify':
          if (!rule.copyStopLoss && !rule.copyTakeProfit) {
            out.push(skip('sltp_not_copied', 'the rule copies neither stop loss nor take profit'));
            break;
          }
          out.push(
            send({
              stopLoss: rule.copyStopLoss ? str(onGrid(sl)) : null,
              takeProfit: rule.copyTakeProfit ? str(onGrid(tp)) : null,
              plannedVolume: link.volume,
            }),
          );
          break;
        case 'order_modified': {
          if (!spec) {
            out.push(skip('unknown_symbol', `the Slave's broker does not list ${mapped}`));
            break;
          }
          const entry = onGrid(action.price);
          const sized = sizeVolume(
            rule,
            {
              masterVolume: action.volume,
              masterBalance: master.balance,
              masterEquity: master.equity,
              slaveBalance: account.balance,
              slaveEquity: account.equity,
              entryPrice: entry,
              stopLoss: rule.copyStopLoss ? onGrid(sl) : null,
              quoteToAccount: quoteToAccount(mapped, account.currency, entry),
            },
            spec,
          );
          out.push(
            send({
              plannedPrice: str(onGrid(action.price)),
              plannedVolume: sized.ok ? sized.volume.toString() : null,
              stopLoss: str(onGrid(sl)),
              takeProfit: str(onGrid(tp)),
            }),
          );
          break;
        }
        case 'order_filled': {
          // A fill adds exposure: a Slave that may not take any (paused, locked, disconnected) or that the risk
          // guard refuses only has its pending copy cancelled, so it cannot fill later on its own.
          const refuse = (reason: string): Planned<S> =>
            send({
              action: 'order_cancelled',
              skipReason: `${reason}; the pending copy is cancelled instead of filled`,
            });
          if (!isEligibleSlave(account)) {
            out.push(refuse(`slave_not_eligible: account status is ${account.status}`));
            break;
          }
          const fill = (volume: string | null) =>
            send({
              plannedVolume: volume,
              stopLoss: rule.copyStopLoss ? str(onGrid(sl)) : null,
              takeProfit: rule.copyTakeProfit ? str(onGrid(tp)) : null,
            });
          const volume = link.volume;
          if (!spec || !volume) {
            out.push(fill(volume));
            break;
          }
          const ctx: PreTradeContext = {
            master,
            slave: account,
            rule,
            action: rowAction,
            symbol: mapped,
            side: row.side,
            type: 'market',
            volume: new Decimal(volume),
            price: action.price,
            stopLoss: rule.copyStopLoss ? onGrid(sl) : null,
            spec,
          };
          out.push({
            ...fill(volume),
            check: {
              ctx,
              decide: (d) => (d.ok ? fill(d.volume ? d.volume.toString() : volume) : refuse(`${d.code}: ${d.message}`)),
            },
          });
          break;
        }
        default:
          out.push(skip('not_supported', `action ${action.kind}`));
      }
    }
  }
  return out;
}
