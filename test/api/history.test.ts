import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Account } from '../../src/domain/account.js';
import { Decimal } from '../../src/domain/decimal.js';
import { runCli } from '../helpers/cli-run.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * History and reports over the demo: a trade the demo Master makes and closes is copied and closed on its Slaves,
 * and shows up with realized profit per trade (broker-booked on the simulator, computed on TradeLocker) and, per
 * follower, beside the Master's profit scaled by the volume ratio.
 */
let svc: TestService;
let key: string;
let master: Account;
let simSlave: Account;
let bX2: Account;
let groupId: string;
let masterProfit: Decimal;

const EURUSD_CONTRACT = 100_000;

beforeAll(async () => {
  svc = await startTestService();
  key = svc.demo!.apiKey;
  const all = await svc.store.accounts.all();
  master = all.find((a) => a.platform === 'sim' && a.role === 'master' && a.name === 'Demo Master')!;
  groupId = master.groupId!;
  simSlave = all.find((a) => a.platform === 'sim' && a.role === 'slave' && a.groupId === groupId)!;
  bX2 = all.find((a) => a.name === 'Demo B Slave 2 (x2)')!;
  svc.broker.setPrice('EURUSD', '1.10000');
  const opened = svc.broker.placeOrder(master.brokerAccountId, {
    symbol: 'EURUSD',
    side: 'buy',
    type: 'market',
    volume: new Decimal('0.1'),
    tag: 'hist-open',
  }).position!;
  await copiesOpen(1);
  svc.broker.setPrice('EURUSD', '1.10500');
  svc.broker.closePosition(master.brokerAccountId, opened.id);
  await copiesOpen(0);
  const booked = svc.broker.dealsOf(master.brokerAccountId, { positionId: opened.id }).find((d) => d.entry === 'out')!;
  masterProfit = booked.profit;
}, 60_000);
afterAll(async () => svc?.close());

/** Waits until both followers hold `n` open copies (the engine copied the Master's open, or its close). */
async function copiesOpen(n: number): Promise<void> {
  for (const s of [simSlave, bX2])
    await vi.waitFor(
      async () => {
        if ((await svc.store.accounts.openCopies(s.id)).asSlave !== n)
          throw new Error(`${s.name}: not ${n} open copies`);
      },
      { timeout: 20_000, interval: 50 },
    );
}

const get = (path: string, token = key) => svc.call('GET', path, { token });

describe('history and reports', () => {
  it("lists the Master's closed trade with the profit its broker booked", async () => {
    const r = await get(`/v1/accounts/${master.id}/history`);
    expect(r.status).toBe(200);
    expect(r.body.trades).toHaveLength(1);
    const t = r.body.trades[0];
    expect([t.symbol, t.side, t.volume, t.profitSource, t.fullyClosed, t.master]).toEqual([
      'EURUSD',
      'buy',
      0.1,
      'broker',
      true,
      null,
    ]);
    expect(t.profit).toBe(masterProfit.toNumber());
    expect(masterProfit.gt(0)).toBe(true);
    expect(r.body.nextCursor).toBeNull();
  });

  it("pairs a TradeLocker follower's computed profit with the Master's, scaled by the volume ratio", async () => {
    const r = await get(`/v1/accounts/${bX2.id}/history`);
    expect(r.status).toBe(200);
    const [t] = r.body.trades;
    expect(t.profitSource).toBe('computed');
    expect(t.volume).toBe(0.2);
    const computed = new Decimal(t.closePrice).minus(t.openPrice).mul(t.volume).mul(EURUSD_CONTRACT);
    expect(t.profit).toBe(computed.toDecimalPlaces(2).toNumber());
    expect(t.master).toMatchObject({ accountId: master.id, ratio: 2, profit: masterProfit.toNumber() });
    expect(t.master.scaledProfit).toBe(masterProfit.mul(2).toDecimalPlaces(2).toNumber());
  });

  it('statistics of a follower: net profit, win rate, copy success ratio and its profit beside the Master', async () => {
    const r = await get(`/v1/accounts/${simSlave.id}/history/stats`);
    expect(r.status).toBe(200);
    const trades = (await get(`/v1/accounts/${simSlave.id}/history`)).body.trades;
    expect(trades[0].profitSource).toBe('broker');
    expect(r.body.stats).toMatchObject({
      trades: 1,
      pricedTrades: 1,
      wins: 1,
      winRate: 1,
      netProfit: trades[0].netProfit,
    });
    expect(r.body.bySymbol.map((s: { symbol: string }) => s.symbol)).toEqual(['EURUSD']);
    expect(r.body.curve).toHaveLength(1);
    expect(r.body.copy).toMatchObject({ confirmed: 2, attempted: 2, successRatio: 1 });
    expect(r.body.tracking).toMatchObject({ pairedTrades: 1, copyProfit: trades[0].profit });
    expect(r.body.tracking.masterScaledProfit).toBe(trades[0].master.scaledProfit);
  });

  it('group statistics: the Master and each follower, and the followers total', async () => {
    const r = await get(`/v1/copier-groups/${groupId}/history/stats`);
    expect(r.status).toBe(200);
    expect(r.body.master).toMatchObject({ accountId: master.id, stats: { trades: 1 } });
    const b = r.body.followers.find((f: { accountId: string }) => f.accountId === bX2.id);
    expect(b.stats.trades).toBe(1);
    expect(b.tracking.pairedTrades).toBe(1);
    expect(r.body.followersTotal.trades).toBeGreaterThanOrEqual(2);
  });

  it('exports the period as CSV', async () => {
    const r = await svc.call('GET', `/v1/accounts/${bX2.id}/history?format=csv`, { token: key });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(r.headers.get('content-disposition')).toMatch(/attachment; filename="history-/);
    const lines = r.text.trim().split('\r\n');
    expect(lines[0]!.startsWith('close_time,open_time,position_id,symbol,side,volume')).toBe(true);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`,computed,true,${master.id},`);
  });

  it('the period is bounded and checked; a foreign or unknown id is the same 404', async () => {
    const long = await get(`/v1/accounts/${master.id}/history?from=2025-01-01T00:00:00Z&to=2026-06-01T00:00:00Z`);
    expect([long.status, long.body.code]).toEqual([400, 'invalid_request']);
    expect(long.body.error).toMatch(/366 days/);
    const backwards = await get(`/v1/accounts/${master.id}/history/stats?from=2026-02-01&to=2026-01-01`);
    expect(backwards.status).toBe(400);
    const empty = await get(`/v1/accounts/${master.id}/history?from=2020-01-01T00:00:00Z&to=2020-02-01T00:00:00Z`);
    expect([empty.status, empty.body.trades]).toEqual([200, []]);
    const other = await svc.deps.auth.createUser('h@example.test', 'password-123');
    const { apiKey } = await svc.deps.auth.createApiKey(other.id, 'k');
    for (const path of [
      `/v1/accounts/${master.id}/history`,
      `/v1/accounts/${master.id}/history/stats`,
      `/v1/copier-groups/${groupId}/history/stats`,
    ]) {
      const foreign = await get(path, apiKey);
      const unknown = await get(path.replace(/(acc|grp)_[A-Za-z0-9_-]+|[0-9a-f-]{36}/, 'nope'), apiKey);
      expect([foreign.status, foreign.body.code]).toEqual([404, 'not_found']);
      expect(unknown.status).toBe(404);
    }
  });

  it("a broker that cannot be read is a 503 on the account; the group reports that member's error", async () => {
    svc.broker.faults.inject({ op: 'read', kind: 'reset', accountId: simSlave.brokerAccountId, times: 1 });
    // Periods of their own: a read the cache holds would not reach the broker.
    const hourAgo = (ms: number) => new Date(Date.now() - 3_600_000 - ms).toISOString();
    const r = await get(`/v1/accounts/${simSlave.id}/history?from=${hourAgo(0)}`);
    expect([r.status, r.body.code]).toEqual([503, 'upstream_unavailable']);
    svc.broker.faults.inject({ op: 'read', kind: 'reset', accountId: simSlave.brokerAccountId, times: 1 });
    const g = await get(`/v1/copier-groups/${groupId}/history/stats?from=${hourAgo(1000)}`);
    expect(g.status).toBe(200);
    expect(g.body.errors).toBe(1);
    const failed = g.body.followers.find((f: { accountId: string }) => f.accountId === simSlave.id);
    expect(failed.error.code).toBe('upstream_unavailable');
    expect(g.body.master.stats.trades).toBe(1);
  });

  it('the CLI: copytrade history (table, --json, --csv) and copytrade stats --group', async () => {
    const env = { COPYTRADE_URL: svc.v1BaseUrl, COPYTRADE_API_KEY: key };
    const [table, json, csv, group, usage] = await Promise.all([
      runCli(['history', bX2.id], env),
      runCli(['history', bX2.id, '--json'], env),
      runCli(['history', bX2.id, '--csv'], env),
      runCli(['stats', '--group', groupId], env),
      runCli(['stats', master.id, '--group', groupId], env),
    ]);
    expect(table.stdout).toMatch(/^CLOSED\s+POSITION\s+SYMBOL/);
    expect(table.stdout).toContain('computed');
    const parsed = JSON.parse(json.stdout);
    expect(parsed.trades).toHaveLength(1);
    expect(parsed.trades[0].master.ratio).toBe(2);
    expect(csv.stdout.split('\r\n')[0]).toMatch(/^close_time,open_time,position_id/);
    expect(group.code).toBe(0);
    expect(group.stdout).toContain('Demo B Slave 2 (x2)');
    expect(group.stdout).toContain('followers total');
    expect(usage.code).toBe(2);
  });
});
