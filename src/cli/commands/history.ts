import { type Command, CommanderError } from 'commander';
import type { CopytradeClient, Ok } from '../../client/index.js';
import { type ApiFlags, clientFor, withApiOptions } from '../api-context.js';
import { EXIT } from '../errors.js';
import { fields, out, table } from '../output.js';

type History = Ok<'/v1/accounts/{account_id}/history', 'get'>;
type Trade = History['trades'][number];
type AccountStats = Ok<'/v1/accounts/{account_id}/history/stats', 'get'>;
type GroupStats = Ok<'/v1/copier-groups/{group_id}/history/stats', 'get'>;
type PeriodFlags = ApiFlags & { from?: string; to?: string };

const period = (o: PeriodFlags) => ({ ...(o.from ? { from: o.from } : {}), ...(o.to ? { to: o.to } : {}) });
const pct = (v: number | null) => (v === null ? null : `${(v * 100).toFixed(1)}%`);

/** `copytrade history ACCOUNT` and `copytrade stats ACCOUNT | --group G`: closed trades and their statistics. */
export function historyCommands(program: Command): void {
  withApiOptions(
    program
      .command('history <accountId>')
      .description("closed trades of an account in a period, a Slave's beside its Master's scaled profit")
      .option('--from <time>', 'ISO 8601 or epoch ms (default: 30 days before --to)')
      .option('--to <time>', 'ISO 8601 or epoch ms, exclusive (default: now)')
      .option('--csv', 'the whole period as CSV on stdout'),
  ).action(async (accountId: string, o: PeriodFlags & { csv?: boolean }) => {
    const ct = clientFor(o);
    const path = { account_id: accountId };
    if (o.csv) {
      const csv = await ct.call(
        ct.api.GET('/v1/accounts/{account_id}/history', {
          params: { path, query: { ...period(o), format: 'csv' } },
          parseAs: 'text',
        }),
      );
      process.stdout.write(String(csv));
      return;
    }
    const trades = await allTrades(ct, accountId, period(o));
    out(o.json, { accountId, trades }, () => tradeTable(trades));
  });

  withApiOptions(
    program
      .command('stats [accountId]')
      .description('statistics of an account, or with --group of a copier group, over a period')
      .option('--group <groupId>', "a copier group: the Master, each follower, the followers' total")
      .option('--from <time>', 'ISO 8601 or epoch ms (default: 30 days before --to)')
      .option('--to <time>', 'ISO 8601 or epoch ms, exclusive (default: now)'),
  ).action(async (accountId: string | undefined, o: PeriodFlags & { group?: string }) => {
    if (!accountId === !o.group)
      throw new CommanderError(EXIT.usage, 'copytrade.usage', 'give an account id or --group, not both');
    const ct = clientFor(o);
    if (o.group) {
      const g = await ct.call(
        ct.api.GET('/v1/copier-groups/{group_id}/history/stats', {
          params: { path: { group_id: o.group }, query: period(o) },
        }),
      );
      out(o.json, g, () => groupText(g));
      return;
    }
    const s = await ct.call(
      ct.api.GET('/v1/accounts/{account_id}/history/stats', {
        params: { path: { account_id: accountId! }, query: period(o) },
      }),
    );
    out(o.json, s, () => statsText(s));
  });
}

/** Every page of the period (the route pages like the other lists). */
async function allTrades(ct: CopytradeClient, accountId: string, q: { from?: string; to?: string }) {
  const trades: Trade[] = [];
  let cursor: string | undefined;
  do {
    const page: History = await ct.call(
      ct.api.GET('/v1/accounts/{account_id}/history', {
        params: { path: { account_id: accountId }, query: { ...q, limit: '500', ...(cursor ? { cursor } : {}) } },
      }),
    );
    trades.push(...page.trades);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return trades;
}

function tradeTable(trades: Trade[]): string {
  return table(
    trades,
    [
      ['closed', (t) => t.closeTime],
      ['position', (t) => t.positionId],
      ['symbol', (t) => t.symbol],
      ['side', (t) => t.side],
      ['volume', (t) => t.volume],
      ['open', (t) => t.openPrice],
      ['close', (t) => t.closePrice],
      ['profit', (t) => t.profit],
      ['swap', (t) => t.swap],
      ['commission', (t) => t.commission],
      ['net', (t) => t.netProfit],
      ['source', (t) => t.profitSource],
      ['master scaled', (t) => t.master?.scaledProfit],
    ],
    'no closed trades in the period',
  );
}

type Stats = AccountStats['stats'];
const statLines = (s: Stats): Array<[string, unknown]> => [
  ['trades', `${s.trades} (${s.wins} won, ${s.losses} lost)`],
  ['net profit', s.netProfit],
  ['gross profit', s.grossProfit],
  ['gross loss', s.grossLoss],
  ['win rate', pct(s.winRate)],
  ['profit factor', s.profitFactor],
  ['max drawdown', s.maxDrawdown],
  ['swap / commission', `${s.swap} / ${s.commission}`],
  ['profit from', `broker ${s.profitSources.broker}, computed ${s.profitSources.computed}`],
];

function statsText(s: AccountStats): string {
  const lines: Array<[string, unknown]> = [
    ['account', `${s.name} (${s.accountId}, ${s.role})`],
    ['period', `${s.from} .. ${s.to}`],
    ['currency', s.currency],
    ...statLines(s.stats),
  ];
  if (s.copy)
    lines.push(
      ['copy success', `${pct(s.copy.successRatio) ?? '-'} (${s.copy.confirmed}/${s.copy.attempted})`],
      ['mean slippage', s.copy.meanSlippage],
    );
  if (s.tracking) lines.push(['vs Master', `${s.tracking.copyProfit} vs ${s.tracking.masterScaledProfit} scaled`]);
  const bySymbol = table(s.bySymbol, [
    ['symbol', (x) => x.symbol],
    ['trades', (x) => x.trades],
    ['net', (x) => x.netProfit],
    ['win rate', (x) => pct(x.winRate)],
    ['profit factor', (x) => x.profitFactor],
  ]);
  return `${fields(lines)}\n\n${bySymbol}`;
}

function groupText(g: GroupStats): string {
  const members = [...(g.master ? [g.master] : []), ...g.followers];
  return `${fields([
    ['group', `${g.name} (${g.groupId})`],
    ['period', `${g.from} .. ${g.to}`],
  ])}\n\n${table(members, [
    ['account', (m) => m.name],
    ['role', (m) => m.role],
    ['trades', (m) => ('stats' in m ? m.stats.trades : null)],
    ['net', (m) => ('stats' in m ? m.stats.netProfit : null)],
    ['win rate', (m) => ('stats' in m ? pct(m.stats.winRate) : null)],
    ['max dd', (m) => ('stats' in m ? m.stats.maxDrawdown : null)],
    ['copy success', (m) => ('copy' in m && m.copy ? pct(m.copy.successRatio) : null)],
    ['master scaled', (m) => ('tracking' in m && m.tracking ? m.tracking.masterScaledProfit : null)],
    ['error', (m) => ('error' in m ? m.error.message : null)],
  ])}\n\n${fields([['followers total', null], ...statLines(g.followersTotal)])}`;
}
