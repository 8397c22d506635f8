import { Decimal, roundToStep } from '../domain/decimal.js';
import type { Account } from '../domain/account.js';
import { isEligibleSlave } from '../domain/account.js';
import type { CopyRule } from '../domain/copy-rule.js';
import { correlationTag } from '../domain/correlation.js';
import { mapSymbol, sizeVolume, type SkipReason } from '../domain/sizing.js';
import type { InstrumentSpec, OrderType, Side } from '../domain/types.js';

/** A master open, as the planner needs it. */
export interface MasterOpen {
  tradeId: string;
  masterAccount: Account;
  symbol: string;
  side: Side;
  type: OrderType;
  volume: Decimal;
  price: Decimal | null;
  stopLoss: Decimal | null;
  takeProfit: Decimal | null;
  /** When the master action happened; copies older than a rule's maxDelayMs are stale. */
  at: number;
}

export interface SlaveContext {
  account: Account;
  rule: CopyRule;
  /** The Slave broker's spec of the mapped symbol, or null when its broker does not list it. */
  spec: InstrumentSpec | null;
}

export type PlannedCopy =
  | { kind: 'send'; slave: Account; tag: string; symbol: string; side: Side; type: OrderType; volume: Decimal; price: Decimal | null; stopLoss: Decimal | null; takeProfit: Decimal | null }
  | { kind: 'skip'; slave: Account; tag: string; symbol: string; side: Side; reason: SkipReason; detail: string };

const opposite = (s: Side): Side => (s === 'buy' ? 'sell' : 'buy');

/**
 * Pure: one decision per Slave, in the order given. Every Slave gets a row, so the ledger can explain a
 * missing copy as well as a made one.
 */
export function planOpen(action: MasterOpen, slaves: SlaveContext[], now: number): PlannedCopy[] {
  return slaves.map(({ account, rule, spec }) => {
    const tag = correlationTag({ tradeId: action.tradeId, accountId: account.id, action: 'open' });
    const side = rule.reverse ? opposite(action.side) : action.side;
    const skip = (reason: SkipReason, detail: string, symbol = action.symbol): PlannedCopy => ({ kind: 'skip', slave: account, tag, symbol, side, reason, detail });
    if (!isEligibleSlave(account)) return skip('slave_not_eligible', `account status is ${account.status}`);
    if (now - action.at > rule.maxDelayMs) return skip('stale_action', `action is ${now - action.at} ms old, rule allows ${rule.maxDelayMs} ms`);
    if (action.type !== 'market' && !rule.copyPendingOrders) return skip('pending_orders_off', 'the rule does not copy pending orders');
    const mapped = mapSymbol(rule, action.symbol);
    if (!mapped.ok) return skip(mapped.reason, mapped.detail);
    if (!spec) return skip('unknown_symbol', `the Slave's broker does not list ${mapped.symbol}`, mapped.symbol);
    const sized = sizeVolume(rule, {
      masterVolume: action.volume,
      masterBalance: action.masterAccount.balance,
      masterEquity: action.masterAccount.equity,
      slaveBalance: account.balance,
      slaveEquity: account.equity,
    }, spec);
    if (!sized.ok) return skip(sized.reason, sized.detail, mapped.symbol);
    // Reversed copies swap the protective levels: the master's stop becomes the slave's target.
    const [sl, tp] = rule.reverse ? [action.takeProfit, action.stopLoss] : [action.stopLoss, action.takeProfit];
    // The Slave's broker may quote the (mapped) symbol on a different tick grid; off-grid levels are refused there.
    const onGrid = (v: Decimal | null) => (v === null ? null : roundToStep(v, spec.tickSize));
    return {
      kind: 'send',
      slave: account,
      tag,
      symbol: mapped.symbol,
      side,
      type: action.type,
      volume: sized.volume,
      price: onGrid(action.price),
      stopLoss: rule.copyStopLoss ? onGrid(sl) : null,
      takeProfit: rule.copyTakeProfit ? onGrid(tp) : null,
    };
  });
}

/**
 * Hook for the risk guard (src/engine/risk/): asked once per Slave for every copy that adds exposure (open,
 * volume increase, pending order), after sizing and before anything is recorded. It may shrink the volume
 * or refuse; a refusal is recorded as `denied` with its code. Absent = everything passes.
 */
export type PreTradeCheck = (ctx: PreTradeContext) => Promise<PreTradeDecision> | PreTradeDecision;

export interface PreTradeContext {
  master: Account;
  slave: Account;
  rule: CopyRule;
  action: 'open' | 'increase' | 'order_placed' | 'heal_open' | 'heal_increase' | 'open_on_fill';
  symbol: string;
  side: Side;
  type: OrderType;
  volume: Decimal;
  price: Decimal | null;
  stopLoss: Decimal | null;
  spec: InstrumentSpec;
}

export type PreTradeDecision = { ok: true; volume?: Decimal } | { ok: false; code: string; message: string };
