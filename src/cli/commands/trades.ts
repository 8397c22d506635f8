import type { Command } from 'commander';
import type { LedgerRow } from '../../client/index.js';
import { clientFor, withApiOptions, type ApiFlags } from '../api-context.js';
import { fields, out, table, type Column } from '../output.js';

const latency = (r: LedgerRow) => {
  const l = r.latencyMs as Record<string, number> | null;
  return l && typeof l === 'object' && 'total' in l
    ? `${l.total} ms`
    : l && typeof l === 'object'
      ? Object.entries(l)
          .map(([k, v]) => `${k} ${v}`)
          .join(' ')
      : null;
};
const ledgerColumns: Array<Column<LedgerRow>> = [
  ['account', (r) => r.accountId],
  ['action', (r) => r.action],
  ['symbol', (r) => r.symbol],
  ['side', (r) => r.side],
  ['planned', (r) => r.plannedVolume],
  ['outcome', (r) => r.outcome],
  ['reason', (r) => r.skipReason],
  ['filled', (r) => r.filledVolume],
  ['fill', (r) => r.fillPrice],
  ['slippage', (r) => r.slippage],
  ['latency', latency],
];

export function tradeCommands(program: Command): void {
  const trades = program.command('trades').description('trades and their copy ledger');
  withApiOptions(
    trades.command('show <tradeId>').description("a trade: the Master's outcome and one ledger row per Slave"),
  ).action(async (tradeId: string, o: ApiFlags) => {
    const ct = clientFor(o);
    const t = await ct.call(ct.api.GET('/v1/trades/{trade_id}', { params: { path: { trade_id: tradeId } } }));
    out(
      o.json,
      t,
      () =>
        fields([
          ['trade', t.tradeId],
          ['master', t.masterAccountId],
          ['source', t.source],
          ['action', `${t.action} ${t.side} ${t.volume} ${t.symbol} (${t.type})`],
          ['status', t.status],
          ['fill price', t.master.fillPrice],
          ['copied to', t.copiedTo],
          ['created', t.createdAt],
        ]) +
        '\n\n' +
        table(t.copies, ledgerColumns, 'no copies'),
    );
  });

  withApiOptions(
    program.command('ledger').description("the copy ledger: recent trades, or with --account one Slave's rows"),
  )
    .option('--account <accountId>', "one Slave account's ledger rows")
    .option('--limit <n>', '1..200', '50')
    .action(async (o: ApiFlags & { account?: string; limit: string }) => {
      const ct = clientFor(o);
      if (o.account) {
        const r = await ct.call(
          ct.api.GET('/v1/accounts/{account_id}/ledger', {
            params: { path: { account_id: o.account }, query: { limit: o.limit } },
          }),
        );
        out(o.json, r, () =>
          table(r.entries, [['created', (e) => e.createdAt], ...ledgerColumns.slice(1)], 'no ledger rows'),
        );
        return;
      }
      const r = await ct.call(ct.api.GET('/v1/trades', { params: { query: { limit: o.limit } } }));
      out(o.json, r, () =>
        table(
          r.trades,
          [
            ['trade', (t) => t.tradeId],
            ['created', (t) => t.createdAt],
            ['master', (t) => t.masterAccountId],
            ['action', (t) => t.action],
            ['symbol', (t) => t.symbol],
            ['side', (t) => t.side],
            ['volume', (t) => t.volume],
            ['status', (t) => t.status],
            ['copied', (t) => t.copiedTo],
            ['confirmed', (t) => t.copies.filter((c) => c.outcome === 'confirmed').length],
            ['skipped', (t) => t.copies.filter((c) => c.outcome === 'skipped').length],
          ],
          'no trades',
        ),
      );
    });
}
