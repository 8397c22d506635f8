import type { Command } from 'commander';
import { clientFor, withApiOptions, type ApiFlags } from '../api-context.js';
import { platformName } from '../../client/platform-names.js';
import { fields, out, table } from '../output.js';
import type { Position } from '../../client/index.js';

export function accountCommands(program: Command): void {
  const accounts = program.command('accounts').description('your broker accounts (family V)');
  withApiOptions(accounts.command('list').description('every account with platform, role, status and health')).action(
    async (o: ApiFlags) => {
      const ct = clientFor(o);
      const r = await ct.call(ct.api.GET('/v1/accounts'));
      out(o.json, r, () =>
        table(
          r.accounts,
          [
            ['id', (a) => a.id],
            ['name', (a) => a.name],
            ['platform', (a) => platformName(a.platform)],
            ['role', (a) => a.role],
            ['status', (a) => a.status],
            ['health', (a) => a.health?.state],
            ['balance', (a) => a.balance],
            ['equity', (a) => a.equity],
            ['group', (a) => a.groupId],
          ],
          'no accounts',
        ),
      );
    },
  );

  withApiOptions(
    program.command('positions <accountId>').description("an account's open positions, read at its broker"),
  ).action(async (accountId: string, o: ApiFlags) => {
    const ct = clientFor(o);
    // The list is paged (issue 46): every page, so the table and --json show all open positions.
    const r = { positions: [] as Position[], nextCursor: null };
    let cursor: string | undefined;
    do {
      const query = { limit: '500', ...(cursor ? { cursor } : {}) };
      const page = await ct.call(
        ct.api.GET('/v1/accounts/{account_id}/positions', { params: { path: { account_id: accountId }, query } }),
      );
      r.positions.push(...page.positions);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    out(o.json, r, () =>
      table(
        r.positions,
        [
          ['id', (p) => p.id],
          ['symbol', (p) => p.symbol],
          ['side', (p) => p.side],
          ['volume', (p) => p.volume],
          ['open', (p) => p.openPrice],
          ['current', (p) => p.currentPrice],
          ['sl', (p) => p.stopLoss],
          ['tp', (p) => p.takeProfit],
          ['profit', (p) => p.profit],
        ],
        'no open positions',
      ),
    );
  });

  withApiOptions(
    accounts
      .command('test <accountId>')
      .description(
        'read the account at its broker again (funds, symbols, positions, orders, trading allowed); a pass makes an unverified account assignable; exits 1 when the test fails',
      ),
  ).action(async (accountId: string, o: ApiFlags) => {
    const ct = clientFor(o);
    const r = await ct.call(
      ct.api.POST('/v1/accounts/{account_id}/connection-test', { params: { path: { account_id: accountId } } }),
    );
    const t = r.connectionTest!;
    out(o.json, r, () =>
      fields([
        ['account', `${r.id} (${r.name})`],
        ['status', r.status],
        ['test', t.ok ? 'passed' : `FAILED: ${t.error}`],
        ['balance', t.balance],
        ['equity', t.equity],
        ['currency', t.currency],
        ['symbols', t.symbols ?? 'not listed by this platform'],
        ['positions', t.positions],
        ['orders', t.orders],
        ['trading', t.tradingAllowed === null ? 'not reported' : t.tradingAllowed ? 'allowed' : 'not allowed'],
        ['group', r.groupId],
      ]),
    );
    if (!t.ok) process.exitCode = 1;
  });
}
