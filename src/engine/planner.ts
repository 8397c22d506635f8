import { Decimal, roundToStep } from '../domain/decimal.js';
import type { Account } from '../domain/account.js';
import { isEligibleSlave } from '../domain/account.js';
import type { CopyRule } from '../domain/copy-rule.js';
import { correlationTag } from '../domain/correlation.js';
import { mapSymbol, sizeVolume, type SizingInput, type SizingResult, type SkipReason } from '../domain/sizing.js';
import { quoteToAccount } from '../domain/quote-currency.js';
import { filterTrade, filtersNothing } from '../domain/trade-filters.js';
import { ruleForSymbol } from '../domain/copy-mapping.js';
import { tradeAmountSkip } from '../domain/trade-amount.js';
import { slippageBound, slippageCheck } from '../domain/slippage.js';
import type { InstrumentSpec, OrderType, Quote, Side } from '../domain/types.js';
import type { IntentAction } from '../domain/intent-action.js';
import { sizingRecord, type SizingRecord } from '../domain/receipts/sizing-record.js';

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
  /** The Master's fill price of a market open (the slippage reference), when known. */
  fillPrice?: Decimal | null;
  /** The Master trade's magic number and comment, where its platform carries them (the rule's filters read them). */
  magic?: number | null;
  comment?: string | null;
}

export interface SlaveContext {
  account: Account;
  rule: CopyRule;
  /** The Slave broker's spec of the mapped symbol, or null when its broker does not list it. */
  spec: InstrumentSpec | null;
  /** The Slave broker's current bid/ask of the mapped symbol (fetched when the rule needs it), null = none. */
  quote?: Quote | null;
  /** Mid of the pair converting a cross's quote currency into the Slave's account currency, when known. */
  crossRate?: Decimal | null;
}

export type PlannedCopy =
  | {
      kind: 'send';
      slave: Account;
      tag: string;
      symbol: string;
      side: Side;
      type: OrderType;
      volume: Decimal;
      price: Decimal | null;
      stopLoss: Decimal | null;
      takeProfit: Decimal | null;
      /** What the sizing read and decided, recorded with the row (receipts re-run it). */
      sizing: SizingRecord;
    }
  | {
      kind: 'skip';
      slave: Account;
      tag: string;
      symbol: string;
      side: Side;
      reason: SkipReason;
      detail: string;
      /** Set when the sizing decided the skip. */
      sizing?: SizingRecord;
    };

interface Sized {
  sized: SizingResult;
  record: SizingRecord;
}

const opposite = (s: Side): Side => (s === 'buy' ? 'sell' : 'buy');

/** Sizing by a multiplier or a fixed volume reads nothing of the Slave but its rule (sizing, limits) and its spec. */
const sharesSizing = (rule: CopyRule): boolean => rule.sizing.mode === 'multiplier' || rule.sizing.mode === 'fixed';

/**
 * `sizeVolume` for rules that `sharesSizing`, once per fan-out for each spec and each (sizing, limits) its Slaves
 * have, not once per Slave: a fan-out's Slaves mostly share them, and each sizing was 2.7 us of decimal.js.
 */
function sizingPerFanOut(masterVolume: Decimal): (rule: CopyRule, spec: InstrumentSpec) => Sized {
  const bySpec = new Map<InstrumentSpec, Map<string, Sized>>();
  // The Slave before's, compared field by field first: building and hashing a key string per Slave cost as much
  // as the rest of its planning, and in a fan-out the next Slave's rule mostly matches.
  let last: { mode: string; amount: string; min: string | null; max: string | null; spec: InstrumentSpec } | null =
    null;
  let lastSized: Sized | null = null;
  return (rule, spec) => {
    const s = rule.sizing;
    const amount = s.mode === 'multiplier' ? s.multiplier : s.mode === 'fixed' ? s.volume : '';
    if (
      last &&
      lastSized &&
      last.spec === spec &&
      last.mode === s.mode &&
      last.amount === amount &&
      last.min === rule.minVolume &&
      last.max === rule.maxVolume
    )
      return lastSized;
    const key = `${s.mode}|${amount}|${rule.minVolume}|${rule.maxVolume}`;
    let known = bySpec.get(spec);
    if (!known) bySpec.set(spec, (known = new Map()));
    let sized = known.get(key);
    if (!sized) {
      const input = { masterVolume };
      const result = sizeVolume(rule, input, spec);
      // One record per distinct sizing of the fan-out, shared by its rows (the insert writes its JSON once).
      known.set(key, (sized = { sized: result, record: sizingRecord(rule, input, spec, result) }));
    }
    last = { mode: s.mode, amount, min: rule.minVolume, max: rule.maxVolume, spec };
    lastSized = sized;
    return sized;
  };
}

/**
 * Pure: one decision per Slave, in the order given. Every Slave gets a row, so the ledger can explain a
 * missing copy as well as a made one.
 */
export function planOpen(action: MasterOpen, slaves: SlaveContext[], now: number): PlannedCopy[] {
  // What depends on the action alone, or on the action and a Slave's tick grid, is computed once per fan-out,
  // not once per Slave: a 1000-Slave fan-out mostly shares one spec (one grid) and one symbol mapping.
  const age = now - action.at;
  const onGrids = new Map<Decimal, GridLevels>();
  const levelsOn = (tickSize: Decimal): GridLevels => {
    let g = onGrids.get(tickSize);
    if (!g) {
      const onGrid = (v: Decimal | null) => (v === null ? null : roundToStep(v, tickSize));
      g = { price: onGrid(action.price), stopLoss: onGrid(action.stopLoss), takeProfit: onGrid(action.takeProfit) };
      onGrids.set(tickSize, g);
    }
    return g;
  };
  const sizedOnce = sizingPerFanOut(action.volume);
  const amountOnce = tradeAmountPerFanOut();
  return slaves.map(({ account, rule, spec, quote, crossRate }) => {
    const tag = correlationTag({ tradeId: action.tradeId, accountId: account.id, action: 'open' });
    const side = rule.reverse ? opposite(action.side) : action.side;
    const skip = (reason: SkipReason, detail: string, symbol = action.symbol): PlannedCopy => ({
      kind: 'skip',
      slave: account,
      tag,
      symbol,
      side,
      reason,
      detail,
    });
    if (!isEligibleSlave(account)) return skip('slave_not_eligible', `account status is ${account.status}`);
    if (!filtersNothing(rule)) {
      const filtered = filterTrade(rule, action);
      if (filtered) return skip(filtered.reason, filtered.detail);
    }
    if (age > rule.maxDelayMs)
      return skip('stale_action', `action is ${age} ms old, rule allows ${rule.maxDelayMs} ms`);
    if (action.type !== 'market' && !rule.copyPendingOrders)
      return skip('pending_orders_off', 'the rule does not copy pending orders');
    const mapped = mapSymbol(rule, action.symbol);
    if (!mapped.ok) return skip(mapped.reason, mapped.detail);
    if (!spec) return skip('unknown_symbol', `the Slave's broker does not list ${mapped.symbol}`, mapped.symbol);
    // The price the Slave would get now for the copy's side: buy at the ask, sell at the bid.
    const slavePrice = quote ? (side === 'buy' ? quote.ask : quote.bid) : null;
    // Planned by the rule's override for the Master symbol, when it has one (sizing, slippage in points).
    const sizing = ruleForSymbol(rule, action.symbol);
    if ((sizing.maxSlippage || sizing.maxSlippagePoints) && action.type === 'market') {
      const slip = slippageCheck(side, slavePrice, action.fillPrice ?? null, slippageBound(sizing, spec)!);
      if (slip) return skip(slip.reason, slip.detail, mapped.symbol);
    }
    // The Slave's broker may quote the (mapped) symbol on a different tick grid; off-grid levels are refused there.
    const grid = levelsOn(spec.tickSize);
    // Reversed copies swap the protective levels: the master's stop becomes the slave's target.
    const [sl, tp] = rule.reverse ? [grid.takeProfit, grid.stopLoss] : [grid.stopLoss, grid.takeProfit];
    // Risk is measured from where the copy enters to the stop it will carry.
    const entry = action.type === 'market' ? (slavePrice ?? action.fillPrice ?? null) : grid.price;
    const { sized, record } = sharesSizing(sizing)
      ? sizedOnce(sizing, spec)
      : sizedAlone(
          sizing,
          {
            masterVolume: action.volume,
            masterBalance: action.masterAccount.balance,
            masterEquity: action.masterAccount.equity,
            slaveBalance: account.balance,
            slaveEquity: account.equity,
            entryPrice: entry,
            stopLoss: rule.copyStopLoss ? sl : null,
            // Read by risk_percent sizing only.
            quoteToAccount:
              sizing.sizing.mode === 'risk_percent'
                ? quoteToAccount(mapped.symbol, account.currency, entry, crossRate ?? null)
                : null,
          },
          spec,
        );
    if (!sized.ok) return { ...skip(sized.reason, sized.detail, mapped.symbol), sizing: record } as PlannedCopy;
    if (rule.minTradeAmount) {
      const small = amountOnce(rule.minTradeAmount, sized.volume, spec, entry, account.currency, crossRate ?? null);
      if (small) return { ...skip(small.reason, small.detail, mapped.symbol), sizing: record } as PlannedCopy;
    }
    return {
      kind: 'send',
      slave: account,
      tag,
      symbol: mapped.symbol,
      side,
      type: action.type,
      volume: sized.volume,
      price: grid.price,
      stopLoss: rule.copyStopLoss ? sl : null,
      takeProfit: rule.copyTakeProfit ? tp : null,
      sizing: record,
    };
  });
}

/**
 * `tradeAmountSkip` once per shared sized volume for the Slaves that value the copy alike (the fan-out's first
 * Slave's spec, price, currency, conversion and minimum; the others are valued alone): the decimal arithmetic was a
 * microsecond per Slave, a lookup is a few nanoseconds.
 */
function tradeAmountPerFanOut() {
  type Args = [string, Decimal, InstrumentSpec, Decimal | null, string | null, Decimal | null];
  type Result = ReturnType<typeof tradeAmountSkip>;
  let common: Args | null = null;
  const byVolume = new Map<Decimal, Result>();
  const value = ([min, volume, spec, price, currency, cross]: Args): Result =>
    tradeAmountSkip(min, volume, spec, price, quoteToAccount(spec.symbol, currency, price, cross), currency);
  return (...a: Args): Result => {
    common ??= a;
    if (a[0] !== common[0] || a[2] !== common[2] || a[3] !== common[3] || a[4] !== common[4] || a[5] !== common[5])
      return value(a);
    let r = byVolume.get(a[1]);
    if (r === undefined) byVolume.set(a[1], (r = value(a)));
    return r;
  };
}

/** A sizing that reads the Slave's own figures (ratios, risk), with its record. */
function sizedAlone(rule: CopyRule, input: SizingInput, spec: InstrumentSpec): Sized {
  const sized = sizeVolume(rule, input, spec);
  return { sized, record: sizingRecord(rule, input, spec, sized) };
}

/** The action's price and protective levels rounded to one tick grid. */
interface GridLevels {
  price: Decimal | null;
  stopLoss: Decimal | null;
  takeProfit: Decimal | null;
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
  /** A row that places an order, or `order_filled` (a Slave's pending copy filled at market). */
  action: IntentAction;
  symbol: string;
  side: Side;
  type: OrderType;
  volume: Decimal;
  price: Decimal | null;
  stopLoss: Decimal | null;
  spec: InstrumentSpec;
}

export type PreTradeDecision = { ok: true; volume?: Decimal } | { ok: false; code: string; message: string };
