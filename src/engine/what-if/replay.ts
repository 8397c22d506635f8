import { Decimal } from '../../domain/decimal.js';
import type { Account } from '../../domain/account.js';
import type { CopyRule } from '../../domain/copy-rule.js';
import type { ReplayIntent, ReplayTrade } from '../../domain/revisions/replay-types.js';
import { quoteToAccount } from '../../domain/quote-currency.js';
import { mapSymbol } from '../../domain/sizing.js';
import type { InstrumentSpec, OrderType, Side } from '../../domain/types.js';
import { planOpen, type MasterOpen } from '../planner.js';
import { copyProfit, MasterExits } from './profit.js';
import { recordedInput, recordedSpec, storedSizing, type StoredSizing } from './recorded.js';

/** One recorded ledger row of the Slave with the Master's trade it copies. */
export interface ReplayRow {
  intent: ReplayIntent;
  trade: ReplayTrade;
}

export interface WhatIfInput {
  slave: Account;
  /** The Masters the rows copy, by id (their balances and equities come from the rows' records where recorded). */
  masters: ReadonlyMap<string, Account>;
  candidate: CopyRule;
  /** The Slave's rows of the period, in the order they were planned. */
  rows: readonly ReplayRow[];
  /** The Masters' trades of the period (opens, reductions, closes): where their positions went, at what price. */
  masterTrades: readonly ReplayTrade[];
}

/** What one copy did, or would do: the planned volume (null = nothing sent), the skip code, the risk guard's word. */
export interface CopyOutcome {
  volume: Decimal | null;
  side: Side;
  skipReason: string | null;
  /** The risk guard's refusal code, or `shrunk` where it lowered the volume. */
  riskLimit: string | null;
  /** At the recorded prices, when the Master's position closed in the period; null while open or unknown. */
  profit: Decimal | null;
}

export interface CopyDiff {
  intentId: string;
  tradeId: string;
  action: string;
  at: Date;
  symbol: string;
  state: string;
  done: CopyOutcome;
  candidate: CopyOutcome;
  changed: boolean;
}

/** Actions whose volume the sizing decides: the copies a rule changes. Follow-ups go where these went. */
const SIZED = new Set(['open', 'increase', 'order_placed', 'open_on_fill']);
/** Skips that say something of the world at that moment, not of the rule: a candidate meets them as well. */
const WORLD = new Set([
  'master_not_eligible',
  'slave_not_eligible',
  'broker_unavailable',
  'user_closed',
  'already_closed_by_panic',
  'capability_missing',
  'already_copied',
  'closed_before_copy',
]);
const code = (reason: string | null): string | null => (reason ? reason.split(':')[0]! : null);

/**
 * Pure: the Slave's recorded copies of a period planned again with a candidate rule, through the planner the copy
 * engine runs (`planOpen`), from what each row recorded when it was planned (the Master's trade, the balances or
 * equities read, the Slave broker's symbol specification, the entry price). Per copy, what was done and what the
 * candidate would do. The same rule gives the same outcome: a row planned under it is planned again from its inputs.
 */
export function replayWhatIf(input: WhatIfInput): { copies: CopyDiff[]; followUps: number } {
  const exits = new MasterExits(input.masterTrades);
  const specs = new Map<string, StoredSizing>();
  for (const { intent } of input.rows) {
    const rec = storedSizing(intent.sizingInputs);
    if (rec) specs.set(rec.spec.symbol!, rec);
  }
  const copies: CopyDiff[] = [];
  let followUps = 0;
  for (const row of input.rows) {
    if (!SIZED.has(row.intent.action)) {
      followUps++;
      continue;
    }
    copies.push(replayRow(input, row, exits, specs));
  }
  return { copies, followUps };
}

function replayRow(input: WhatIfInput, row: ReplayRow, exits: MasterExits, specs: Map<string, StoredSizing>): CopyDiff {
  const { intent, trade } = row;
  const rec = storedSizing(intent.sizingInputs);
  const state = intent.state;
  const doneCode = code(intent.skipReason);
  const guardShrunk = rec?.guard?.volume ? new Decimal(rec.guard.volume) : null;
  const sent = state !== 'skipped' && state !== 'denied';
  const done: Omit<CopyOutcome, 'profit'> = {
    volume: sent ? intent.plannedVolume : null,
    side: intent.side,
    skipReason: state === 'skipped' ? doneCode : null,
    riskLimit: state === 'denied' ? (rec?.guard?.denied ?? doneCode) : guardShrunk ? 'shrunk' : null,
  };
  const candidate =
    state === 'skipped' && doneCode && WORLD.has(doneCode)
      ? done
      : plannedAgain(input, row, rec, specs, guardShrunk, state === 'denied' ? done.riskLimit : null);
  const price = profitOf(input, row, rec, specs, exits);
  // A copy the broker refused would have been refused with the candidate's volume too: neither made a profit.
  const filled = (o: Omit<CopyOutcome, 'profit'>) =>
    o.volume && state !== 'rejected' ? price(o.side, o.volume) : null;
  const d = { ...done, profit: state === 'skipped' || state === 'denied' ? null : filled(done) };
  const c = { ...candidate, profit: filled(candidate) };
  return {
    intentId: intent.id,
    tradeId: trade.id,
    action: intent.action,
    at: trade.actionAt ?? trade.createdAt,
    symbol: trade.symbol,
    state,
    done: d,
    candidate: c,
    changed:
      !sameVolume(d.volume, c.volume) ||
      d.skipReason !== c.skipReason ||
      d.riskLimit !== c.riskLimit ||
      d.side !== c.side,
  };
}

/** Specs as recorded, one object per distinct specification (rows of a symbol mostly record the same one). */
const specCache = new Map<string, InstrumentSpec>();
function specOf(rec: StoredSizing): InstrumentSpec {
  const s = rec.spec;
  const key = `${s.symbol}|${s.volumeStep}|${s.minVolume}|${s.maxVolume}|${s.contractSize}|${s.tickSize}`;
  let spec = specCache.get(key);
  if (!spec) {
    if (specCache.size > 10_000) specCache.clear();
    specCache.set(key, (spec = recordedSpec(rec)));
  }
  return spec;
}

const sameVolume = (a: Decimal | null, b: Decimal | null) => (a === null || b === null ? a === b : a.eq(b));

/** The row planned again with the candidate rule, from what it recorded; the risk guard's word of then applied. */
function plannedAgain(
  input: WhatIfInput,
  { intent, trade }: ReplayRow,
  rec: StoredSizing | null,
  specs: Map<string, StoredSizing>,
  guardShrunk: Decimal | null,
  denied: string | null,
): Omit<CopyOutcome, 'profit'> {
  const rule = input.candidate;
  const mapped = mapSymbol(rule, trade.symbol);
  const specRec = mapped.ok ? (rec?.spec.symbol === mapped.symbol ? rec : (specs.get(mapped.symbol) ?? null)) : null;
  const spec: InstrumentSpec | null = specRec ? specOf(specRec) : null;
  const master = input.masters.get(trade.masterAccountId);
  const entry = rec ? recordedInput(rec, 'entryPrice') : null;
  const type: OrderType = intent.action === 'open_on_fill' ? 'market' : trade.orderType;
  const fill = trade.fillPrice ?? trade.price;
  const action: MasterOpen = {
    tradeId: trade.id,
    masterAccount: {
      ...(master ?? input.slave),
      balance: rec ? recordedInput(rec, 'masterBalance') : (master?.balance ?? null),
      equity: rec ? recordedInput(rec, 'masterEquity') : (master?.equity ?? null),
    },
    symbol: trade.symbol,
    side: trade.side,
    type,
    volume: rec ? new Decimal(rec.input.masterVolume ?? trade.volume) : trade.volume,
    price: type === 'market' ? null : trade.price,
    stopLoss: trade.stopLoss,
    takeProfit: trade.takeProfit,
    at: (trade.actionAt ?? trade.createdAt).getTime(),
    fillPrice: type === 'market' ? fill : null,
    magic: trade.masterMagic ?? null,
    comment: trade.masterComment ?? null,
  };
  const slave: Account = {
    ...input.slave,
    status: 'connected',
    balance: rec ? recordedInput(rec, 'slaveBalance') : input.slave.balance,
    equity: rec ? recordedInput(rec, 'slaveEquity') : input.slave.equity,
  };
  const [p] = planOpen(
    action,
    [
      {
        account: slave,
        rule,
        spec,
        quote: entry ? { bid: entry, ask: entry, time: null } : null,
        crossRate: rec ? recordedInput(rec, 'quoteToAccount') : null,
      },
    ],
    intent.createdAt.getTime(),
  );
  if (!p || p.kind === 'skip')
    return { volume: null, side: p?.side ?? intent.side, skipReason: p?.reason ?? null, riskLimit: null };
  if (denied) return { volume: null, side: p.side, skipReason: null, riskLimit: denied };
  if (guardShrunk && p.volume.gt(guardShrunk))
    return { volume: guardShrunk, side: p.side, skipReason: null, riskLimit: 'shrunk' };
  return { volume: p.volume, side: p.side, skipReason: null, riskLimit: null };
}

/** The profit of a copy of the row at the recorded prices, for a side and volume; null where it cannot be told. */
function profitOf(
  input: WhatIfInput,
  { intent, trade }: ReplayRow,
  rec: StoredSizing | null,
  specs: Map<string, StoredSizing>,
  exits: MasterExits,
): (side: Side, volume: Decimal) => Decimal | null {
  const out = exits.after(trade);
  const specRec = rec ?? specs.get(intent.symbol) ?? null;
  const entry = intent.fillPrice ?? (rec ? recordedInput(rec, 'entryPrice') : null) ?? trade.fillPrice ?? trade.price;
  if (!out || !specRec || !entry) return () => null;
  const contract = new Decimal(specRec.spec.contractSize ?? '1');
  const rate = rec ? recordedInput(rec, 'quoteToAccount') : null;
  const toAccount = (exit: Decimal) => rate ?? quoteToAccount(intent.symbol, input.slave.currency, exit, null);
  return (side, volume) => copyProfit(side, volume, entry, out, contract, toAccount);
}
