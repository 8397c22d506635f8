import type { Account } from '../../domain/account.js';
import { AppError, notFound } from '../../domain/errors.js';
import type { FollowedTrade } from '../../domain/history/follower.js';
import { type TradeStats, tradeStats } from '../../domain/history/stats.js';
import type { AccountStats, HistoryService } from './history-service.js';

/** One member's statistics, or why its broker could not be read (the rest of the group is still answered). */
export type MemberStats = AccountStats | { accountId: string; name: string; role: Account['role']; error: MemberError };
export interface MemberError {
  code: string;
  message: string;
}

export interface GroupStats {
  groupId: string;
  name: string;
  master: MemberStats | null;
  followers: MemberStats[];
  /** The followers' trades together (members whose broker failed are left out and listed in `errors`). */
  followersTotal: TradeStats;
  errors: number;
}

type GroupReader = {
  groupView(
    userId: string,
    id: string,
  ): Promise<{ id: string; name: string; master: Account | null; slaves: Account[] } | null>;
};

/** The Master and each follower over the period, each Slave beside its Master; one broker failing is reported. */
export async function groupStats(
  history: HistoryService,
  accounts: GroupReader,
  userId: string,
  groupId: string,
  from: Date,
  to: Date,
): Promise<GroupStats> {
  const g = await accounts.groupView(userId, groupId);
  if (!g) throw notFound('copier group');
  const followerTrades: FollowedTrade[] = [];
  const one = async (a: Account, collect: boolean): Promise<MemberStats> => {
    try {
      const s = await history.stats(a, from, to);
      if (collect) followerTrades.push(...(await history.trades(a, from, to)));
      return s;
    } catch (err) {
      const code = err instanceof AppError ? err.code : 'internal_error';
      const message = err instanceof AppError ? err.message : 'the history could not be read';
      return { accountId: a.id, name: a.name, role: a.role, error: { code, message } };
    }
  };
  // Each member's broker is read at once: a group's answer takes its slowest broker, not their sum.
  const [master, ...followers] = await Promise.all([
    g.master ? one(g.master, false) : Promise.resolve(null),
    ...g.slaves.map((s) => one(s, true)),
  ]);
  return {
    groupId: g.id,
    name: g.name,
    master: master ?? null,
    followers: followers as MemberStats[],
    followersTotal: tradeStats(followerTrades),
    errors: [master, ...followers].filter((m) => m && 'error' in m).length,
  };
}
