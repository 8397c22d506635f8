import type { Account } from '../../domain/account.js';
import { AppError } from '../../domain/errors.js';
import { type ClosedTrade, closedTrades } from '../../domain/history/closed-trades.js';
import {
  type CopyQuality,
  copyQuality,
  type FollowedTrade,
  pairWithMasters,
  type TrackingSummary,
  trackingSummary,
} from '../../domain/history/follower.js';
import {
  closedIn,
  realizedCurve,
  type SymbolStats,
  statsBySymbol,
  type TradeStats,
  tradeStats,
} from '../../domain/history/stats.js';
import type { CopyIntent } from '../../domain/ledger-types.js';
import type { InstrumentSpec } from '../../domain/types.js';
import type { BrokerAdapter } from '../../platforms/adapter.js';
import type { Store } from '../../store/store.js';
import { TtlCache } from './ttl-cache.js';

/**
 * History and reports of an account: its closed trades read from the broker's deal history (realized profit as
 * the broker booked it, or computed where it books none), a Slave's beside its Master's, and the statistics of a
 * period. Read on demand through the adapter; a short cache keeps a dashboard's page, stats and CSV to one read.
 */

export interface HistoryOptions {
  /** Deals read before `from`, so a trade opened before the period and closed in it has its open price. */
  lookbackMs: number;
  cacheMs: number;
  /** Copy-ledger rows read per Slave and period; more are cut (copy.truncated). */
  maxIntents: number;
}
export const HISTORY_DEFAULTS: HistoryOptions = { lookbackMs: 7 * 86_400_000, cacheMs: 10_000, maxIntents: 20_000 };

export interface HistoryDeps {
  store: Pick<Store, 'accounts' | 'trades'>;
  adapters: { forAccount(a: Account): Promise<BrokerAdapter> };
  now?: () => number;
}

export interface AccountStats {
  accountId: string;
  name: string;
  role: Account['role'];
  currency: string | null;
  stats: TradeStats;
  bySymbol: SymbolStats[];
  curve: { time: string; cumulative: string }[];
  /** Slaves only: the copy ledger over the period, and the copy beside its Master's scaled profit. */
  copy: (CopyQuality & { truncated: boolean }) | null;
  tracking: TrackingSummary | null;
}

export class HistoryService {
  private readonly cache: TtlCache<ClosedTrade[]>;
  private readonly now: () => number;

  constructor(
    private readonly deps: HistoryDeps,
    private readonly opts: HistoryOptions = HISTORY_DEFAULTS,
  ) {
    this.now = deps.now ?? Date.now;
    this.cache = new TtlCache(opts.cacheMs, 200, this.now);
  }

  /** The account's trades closed in [from, to), oldest close first; a Slave's paired with its Masters'. */
  async trades(account: Account, from: Date, to: Date): Promise<FollowedTrade[]> {
    const mine = closedIn(await this.closed(account, from), from, to);
    if (account.role !== 'slave') return mine.map((t) => ({ ...t, master: null }));
    const links = await this.deps.store.trades.linksOfSlavePositions(
      account.id,
      mine.map((t) => t.positionId),
    );
    const masters = new Map<string, ClosedTrade[]>();
    for (const id of new Set(links.map((l) => l.masterAccountId))) {
      const master = await this.deps.store.accounts.owned(account.userId, id);
      // A Master whose broker cannot be read leaves its copies unpaired rather than failing the Slave's history.
      if (master) masters.set(id, await this.closed(master, from).catch(() => []));
    }
    return pairWithMasters(mine, links, masters);
  }

  async stats(account: Account, from: Date, to: Date): Promise<AccountStats> {
    const trades = await this.trades(account, from, to);
    const slave = account.role === 'slave';
    const intents = slave ? await this.intents(account.id, from, to) : null;
    return {
      accountId: account.id,
      name: account.name,
      role: account.role,
      currency: account.currency,
      stats: tradeStats(trades),
      bySymbol: statsBySymbol(trades),
      curve: realizedCurve(trades).map((p) => ({ time: p.time, cumulative: p.cumulative.toString() })),
      copy: intents ? { ...copyQuality(intents.rows), truncated: intents.truncated } : null,
      tracking: slave ? trackingSummary(trades) : null,
    };
  }

  /** Closed trades of the deals since from - lookback (cached briefly per account and start). */
  private closed(account: Account, from: Date): Promise<ClosedTrade[]> {
    const since = new Date(from.getTime() - this.opts.lookbackMs);
    return this.cache.get(`${account.id}|${since.getTime()}`, async () => {
      const adapter = await this.deps.adapters.forAccount(account);
      if (!adapter.listDeals)
        throw new AppError('upstream_error', `the ${account.platform} adapter cannot read the deal history`);
      const deals = await adapter.listDeals(since);
      // Instrument specs only where a closing deal carries no profit: the computed profit needs the contract size.
      const specs = new Map<string, InstrumentSpec | null>();
      for (const d of deals)
        if (d.entry === 'out' && (d.profit === null || d.profit === undefined) && !specs.has(d.symbol))
          specs.set(d.symbol, await adapter.instrument(d.symbol));
      return closedTrades(deals, (s) => specs.get(s) ?? null);
    });
  }

  private async intents(slaveId: string, from: Date, to: Date): Promise<{ rows: CopyIntent[]; truncated: boolean }> {
    const limit = this.opts.maxIntents;
    const rows = await this.deps.store.trades.intentsOfAccount(slaveId, { before: to, limit: limit + 1 });
    const inPeriod = rows.filter((i) => i.createdAt >= from);
    return { rows: inPeriod.slice(0, limit), truncated: inPeriod.length > limit };
  }
}
