import { Type } from 'typebox';
import { toNum } from '../../domain/decimal.js';
import type { FollowedTrade } from '../../domain/history/follower.js';
import type { SymbolStats, TradeStats } from '../../domain/history/stats.js';
import type { AccountStats } from '../../engine/history/history-service.js';
import type { GroupStats, MemberStats } from '../../engine/history/group-stats.js';
import { OPEN } from '../schemas.js';

/** The JSON of closed trades and statistics (money in the account currency, as numbers like the positions). */

const N = Type.Union([Type.Number(), Type.Null()]);
const S = Type.Union([Type.String(), Type.Null()]);

export const ClosedTradeSchema = Type.Object(
  {
    id: Type.String({ description: "the broker's position id (`:2`... for a later trade of a reused id)" }),
    positionId: Type.String(),
    symbol: Type.String(),
    side: Type.String(),
    volume: Type.Number({ description: 'lots closed' }),
    openPrice: N,
    closePrice: N,
    openTime: S,
    closeTime: Type.String(),
    profit: Type.Union([Type.Number(), Type.Null()], { description: 'realized, before swap and commission' }),
    profitSource: Type.String({
      description: "broker (the broker's own history), computed (prices x volume x contract size) or unavailable",
    }),
    swap: N,
    commission: N,
    netProfit: N,
    fullyClosed: Type.Boolean(),
    tag: S,
    master: Type.Union([
      Type.Object(
        {
          accountId: Type.String(),
          positionId: Type.String(),
          tradeId: S,
          volume: N,
          profit: N,
          ratio: N,
          scaledProfit: Type.Union([Type.Number(), Type.Null()], {
            description: "the Master's profit x (copy volume / Master volume)",
          }),
        },
        OPEN,
      ),
      Type.Null(),
    ]),
  },
  OPEN,
);

const statFields = {
  trades: Type.Integer(),
  pricedTrades: Type.Integer(),
  wins: Type.Integer(),
  losses: Type.Integer(),
  winRate: N,
  grossProfit: Type.Number(),
  grossLoss: Type.Number(),
  netProfit: Type.Number(),
  swap: Type.Number(),
  commission: Type.Number(),
  volume: Type.Number(),
  profitFactor: N,
  maxDrawdown: Type.Number(),
  profitSources: Type.Object({ broker: Type.Integer(), computed: Type.Integer(), unavailable: Type.Integer() }),
};
export const TradeStatsSchema = Type.Object(statFields, OPEN);
const SymbolStatsSchema = Type.Object({ symbol: Type.String(), ...statFields }, OPEN);

const CopySchema = Type.Object(
  {
    intents: Type.Integer(),
    attempted: Type.Integer(),
    confirmed: Type.Integer(),
    rejected: Type.Integer(),
    unresolved: Type.Integer(),
    skipped: Type.Integer(),
    denied: Type.Integer(),
    successRatio: N,
    meanSlippage: N,
    bySymbol: Type.Array(Type.Object({ symbol: Type.String(), confirmed: Type.Integer(), meanSlippage: N }, OPEN)),
    truncated: Type.Boolean(),
  },
  OPEN,
);
const TrackingSchema = Type.Object(
  {
    pairedTrades: Type.Integer(),
    copyProfit: Type.Number(),
    masterScaledProfit: Type.Number(),
    difference: Type.Number(),
  },
  OPEN,
);

const accountStatFields = {
  accountId: Type.String(),
  name: Type.String(),
  role: Type.String(),
  currency: S,
  stats: TradeStatsSchema,
  bySymbol: Type.Array(SymbolStatsSchema),
  curve: Type.Array(Type.Object({ time: Type.String(), cumulative: Type.Number() }, OPEN)),
  copy: Type.Union([CopySchema, Type.Null()]),
  tracking: Type.Union([TrackingSchema, Type.Null()]),
};
export const AccountStatsSchema = Type.Object({ from: Type.String(), to: Type.String(), ...accountStatFields }, OPEN);
const MemberSchema = Type.Union([
  Type.Object(accountStatFields, OPEN),
  Type.Object(
    {
      accountId: Type.String(),
      name: Type.String(),
      role: Type.String(),
      error: Type.Object({ code: Type.String(), message: Type.String() }),
    },
    OPEN,
  ),
]);
export const GroupStatsSchema = Type.Object(
  {
    groupId: Type.String(),
    name: Type.String(),
    from: Type.String(),
    to: Type.String(),
    master: Type.Union([MemberSchema, Type.Null()]),
    followers: Type.Array(MemberSchema),
    followersTotal: TradeStatsSchema,
    errors: Type.Integer({ description: 'members whose broker could not be read (their entry carries error)' }),
  },
  OPEN,
);

export const tradeJson = (t: FollowedTrade) => ({
  id: t.id,
  positionId: t.positionId,
  symbol: t.symbol,
  side: t.side,
  volume: t.volume.toNumber(),
  openPrice: toNum(t.openPrice),
  closePrice: toNum(t.closePrice),
  openTime: t.openTime,
  closeTime: t.closeTime,
  profit: toNum(t.profit),
  profitSource: t.profitSource,
  swap: toNum(t.swap),
  commission: toNum(t.commission),
  netProfit: toNum(t.netProfit),
  fullyClosed: t.fullyClosed,
  tag: t.tag,
  master: t.master && {
    accountId: t.master.accountId,
    positionId: t.master.positionId,
    tradeId: t.master.tradeId,
    volume: toNum(t.master.volume),
    profit: toNum(t.master.profit),
    ratio: toNum(t.master.ratio),
    scaledProfit: toNum(t.master.scaledProfit),
  },
});

export const statsJson = (s: TradeStats) => ({
  ...s,
  winRate: toNum(s.winRate),
  grossProfit: s.grossProfit.toNumber(),
  grossLoss: s.grossLoss.toNumber(),
  netProfit: s.netProfit.toNumber(),
  swap: s.swap.toNumber(),
  commission: s.commission.toNumber(),
  volume: s.volume.toNumber(),
  profitFactor: toNum(s.profitFactor),
  maxDrawdown: s.maxDrawdown.toNumber(),
});

const symbolJson = (s: SymbolStats) => ({ symbol: s.symbol, ...statsJson(s) });

export const accountStatsJson = (a: AccountStats) => ({
  accountId: a.accountId,
  name: a.name,
  role: a.role,
  currency: a.currency,
  stats: statsJson(a.stats),
  bySymbol: a.bySymbol.map(symbolJson),
  curve: a.curve.map((p) => ({ time: p.time, cumulative: Number(p.cumulative) })),
  copy: a.copy && {
    ...a.copy,
    successRatio: toNum(a.copy.successRatio),
    meanSlippage: toNum(a.copy.meanSlippage),
    bySymbol: a.copy.bySymbol.map((s) => ({ ...s, meanSlippage: toNum(s.meanSlippage) })),
  },
  tracking: a.tracking && {
    pairedTrades: a.tracking.pairedTrades,
    copyProfit: a.tracking.copyProfit.toNumber(),
    masterScaledProfit: a.tracking.masterScaledProfit.toNumber(),
    difference: a.tracking.difference.toNumber(),
  },
});

const memberJson = (m: MemberStats) => ('error' in m ? m : accountStatsJson(m));

export const groupStatsJson = (g: GroupStats) => ({
  groupId: g.groupId,
  name: g.name,
  master: g.master && memberJson(g.master),
  followers: g.followers.map(memberJson),
  followersTotal: statsJson(g.followersTotal),
  errors: g.errors,
});
