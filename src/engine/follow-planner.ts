import type { Decimal } from '../domain/decimal.js';
import { isEligibleSlave } from '../domain/account.js';
import { PANIC_CLOSED } from '../domain/panic-job.js';
import { correlationTag } from '../domain/correlation.js';
import { copyLevels, copySide, onTickGrid, slaveSymbol } from '../domain/copy-mapping.js';
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
      out.push({
        row: Object.assign(base(correlationTag({ tradeId, accountId: account.id, action: rowAction }), null), {
          state: 'skipped' as const,
          skipReason: `${reason}: ${detail}`,
        }),
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
            slaveVolume: link.volume,
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
          else out.push(send({ plannedVolume: pc.volume }));
          break;
        }
        case 'modify':
          if (!rule.copyStopLoss && !rule.copyTakeProfit) {
            out.push(skip('sltp_not_copied', 'the rule copies neither stop loss nor take profit'));
            break;
          }
          out.push(
            send({
              stopLoss: rule.copyStopLoss ? onGrid(sl) : null,
              takeProfit: rule.copyTakeProfit ? onGrid(tp) : null,
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
              plannedPrice: onGrid(action.price),
              plannedVolume: sized.ok ? sized.volume : null,
              stopLoss: onGrid(sl),
              takeProfit: onGrid(tp),
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
          const fill = (volume: Decimal | null) =>
            send({
              plannedVolume: volume,
              stopLoss: rule.copyStopLoss ? onGrid(sl) : null,
              takeProfit: rule.copyTakeProfit ? onGrid(tp) : null,
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
            volume,
            price: action.price,
            stopLoss: rule.copyStopLoss ? onGrid(sl) : null,
            spec,
          };
          const planned = fill(volume);
          planned.check = {
            ctx,
            decide: (d) => (d.ok ? fill(d.volume ?? volume) : refuse(`${d.code}: ${d.message}`)),
          };
          out.push(planned);
          break;
        }
        default:
          out.push(skip('not_supported', `action ${action.kind}`));
      }
    }
  }
  return out;
}
