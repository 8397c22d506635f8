import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { rowsOf } from '../../src/store/rows-of.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { runCli } from '../helpers/cli-run.js';

let svc: TestService;
let key: string;
const exec = async <T>(q: ReturnType<typeof sql>) => rowsOf<T>(await svc.store.database.db.execute(q));

interface Acc {
  id: string;
  role: string;
  platform: string;
  name: string;
  groupId: string | null;
}
let master: Acc;
let slaves: Acc[];
let x1: Acc;
let idle: Acc;

const ENDED = sql`state in ('confirmed','rejected','denied','skipped')`;
async function waitEnded(atLeast: number) {
  await vi.waitFor(
    async () => {
      const [n] = await exec<{ ended: number; open: number }>(
        sql`select count(*) filter (where ${ENDED})::int as ended, count(*) filter (where not (${ENDED}))::int as open from copy_intents`,
      );
      if (!n || n.ended < atLeast || n.open > 0) throw new Error(`ledger not ended yet: ${JSON.stringify(n)}`);
    },
    { timeout: 30_000, interval: 50 },
  );
}
const preview = (account: string, body: unknown, token = key) =>
  svc.call('POST', `/v1/accounts/${account}/rule-preview`, { token, body });

beforeAll(async () => {
  svc = await startTestService();
  key = svc.demo!.apiKey;
  const accounts = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts as Acc[];
  master = accounts.find((a) => a.role === 'master' && a.platform === 'sim')!;
  slaves = accounts.filter((a) => a.role === 'slave' && a.groupId === master.groupId);
  x1 = slaves.find((s) => s.name.includes('(x1)'))!;
  idle = accounts.find((a) => a.role === 'slave' && a.groupId !== master.groupId)!;
  expect(x1).toBeDefined();
  expect(idle).toBeDefined();
  // The demo's history in small: opens of both sides, then the Master's positions closed.
  for (const [side, volume] of [
    ['buy', 0.1],
    ['sell', 0.2],
    ['buy', 0.3],
  ] as const) {
    const r = await svc.call('POST', `/v1/accounts/${master.id}/orders`, {
      token: key,
      body: { symbol: 'EURUSD', side, volume },
    });
    expect(r.status).toBe(202);
  }
  await waitEnded(3 * slaves.length);
  const positions = (await svc.call('GET', `/v1/accounts/${master.id}/positions`, { token: key })).body
    .positions as Array<{ id: string }>;
  for (const p of positions)
    expect(
      (await svc.call('POST', `/v1/accounts/${master.id}/positions/${p.id}/close`, { token: key, body: {} })).status,
    ).toBeLessThan(300);
  await vi.waitFor(
    async () => {
      const [n] = await exec<{ closes: number; open: number }>(
        sql`select count(*) filter (where action = 'close')::int as closes, count(*) filter (where not (${ENDED}))::int as open from copy_intents`,
      );
      if (!n || n.closes < positions.length || n.open > 0) throw new Error(`closes not copied: ${JSON.stringify(n)}`);
    },
    { timeout: 30_000, interval: 50 },
  );
}, 90_000);
afterAll(async () => svc?.close());

describe('what-if preview over the demo history', () => {
  it('the unchanged rule gives zero differences for every Slave', async () => {
    let copies = 0;
    for (const s of slaves) {
      const r = await preview(s.id, { rule: {} });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.copies.filter((c: any) => c.changed)).toEqual([]);
      expect(r.body.totals.changed).toBe(0);
      expect(r.body.totals.volumeDiff).toBe(0);
      expect(r.body.totals.profitDiff).toBe(0);
      expect(r.body.totals.candidate).toEqual(r.body.totals.done);
      copies += r.body.copies.length;
    }
    expect(copies).toBeGreaterThanOrEqual(3 * slaves.length);
  });

  it('a changed multiplier gives the exact expected volumes, and scales the profit', async () => {
    const r = await preview(x1.id, { rule: { sizing: { mode: 'multiplier', multiplier: 2 } } });
    expect(r.status).toBe(200);
    const opens = r.body.copies.filter((c: any) => c.action === 'open');
    expect(opens.map((c: any) => c.done.volume).sort()).toEqual([0.1, 0.2, 0.3]);
    for (const c of opens) {
      expect(c.candidate.volume).toBe(Number((c.done.volume * 2).toFixed(2)));
      expect(c.volumeDiff).toBe(c.done.volume);
      expect(c.changed).toBe(true);
      expect(c.done.profit).not.toBeNull();
      expect(Math.abs(c.candidate.profit - 2 * c.done.profit)).toBeLessThanOrEqual(0.011);
    }
    expect(r.body.totals.done.volume).toBe(0.6);
    expect(r.body.totals.candidate.volume).toBe(1.2);
    expect(r.body.totals.changed).toBe(3);
    expect(r.body.followUps).toBeGreaterThanOrEqual(3);
  });

  it('a rule that skips a symbol says so per copy', async () => {
    const r = await preview(x1.id, { rule: { excludeSymbols: ['EURUSD'] }, changedOnly: true });
    expect(r.status).toBe(200);
    expect(r.body.copies.length).toBe(3);
    for (const c of r.body.copies)
      expect(c.candidate).toMatchObject({ volume: null, skipReason: 'symbol_excluded', profit: null });
    expect(r.body.totals.candidate).toMatchObject({ sent: 0, skipped: 3, volume: 0, profit: 0 });
  });

  it("a side filter says so per copy: sell-only skips the Master's two buys (side_filtered)", async () => {
    const r = await preview(x1.id, { rule: { sides: 'sell' }, changedOnly: true });
    expect(r.status).toBe(200);
    expect(r.body.copies.length).toBe(2);
    for (const c of r.body.copies)
      expect(c.candidate).toMatchObject({ volume: null, skipReason: 'side_filtered', profit: null });
    expect(r.body.totals.candidate.skipped).toBe(2);
  });

  it('a per-symbol override and a minimum trade amount say so per copy', async () => {
    const off = await preview(x1.id, { rule: { symbolOverrides: { EURUSD: { copy: false } } }, changedOnly: true });
    expect(off.status).toBe(200);
    expect(off.body.copies.map((c: any) => c.candidate.skipReason)).toEqual(['symbol_off', 'symbol_off', 'symbol_off']);
    // 0.1, 0.2 and 0.3 lot of EURUSD are worth about 10,800, 21,600 and 32,400 USD.
    const small = await preview(x1.id, { rule: { minTradeAmount: 25_000 }, changedOnly: true });
    expect(small.body.copies.map((c: any) => [c.done.volume, c.candidate.skipReason]).sort()).toEqual([
      [0.1, 'trade_amount_below_minimum'],
      [0.2, 'trade_amount_below_minimum'],
    ]);
    const half = await preview(x1.id, { rule: { symbolOverrides: { EURUSD: { multiplier: 0.5 } } } });
    expect(half.body.totals.candidate.volume).toBe(0.3);
  });

  it('writes nothing', async () => {
    const count = async () =>
      exec<{ i: number; r: number; rr: number; at: string }>(
        sql`select (select count(*)::int from copy_intents) as i, (select count(*)::int from rule_revisions) as rr,
                   (select count(*)::int from receipts) as r, (select max(updated_at)::text from copy_rules) as at`,
      );
    const before = await count();
    expect((await preview(x1.id, { rule: { sizing: { mode: 'fixed', volume: 1 } } })).status).toBe(200);
    expect(await count()).toEqual(before);
  });

  it('bad input: no history, an invalid rule, a year, a foreign or unknown account', async () => {
    const none = await preview(idle.id, { rule: {} });
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ rows: 0, copies: [], totals: { copies: 0, changed: 0 } });

    const bad = await preview(x1.id, { rule: { minVolume: 1, maxVolume: 0.5 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('minVolume must not be greater than maxVolume');

    const year = await preview(x1.id, { rule: {}, days: 365 });
    expect(year.status).toBe(400);
    expect(year.body.error).toContain('at most 90');

    const other = await svc.deps.auth.createUser(`whatif-${Date.now()}@example.test`, 'a long enough password 1');
    const { apiKey } = await svc.deps.auth.createApiKey(other.id, 'test');
    const foreign = await preview(x1.id, { rule: {} }, apiKey);
    const unknown = await preview('acc_unknown', { rule: {} }, apiKey);
    expect(foreign.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect([foreign.body.code, foreign.body.error]).toEqual([unknown.body.code, unknown.body.error]);
  });

  it('copytrade rules preview: the changed copies and the totals', async () => {
    const env = { COPYTRADE_URL: svc.v1BaseUrl, COPYTRADE_API_KEY: key };
    const j = await runCli(['rules', 'preview', '--account', x1.id, '--multiplier', '2', '--json'], env);
    expect(j.code, j.stderr).toBe(0);
    const p = JSON.parse(j.stdout);
    expect(p.copies.map((c: any) => c.candidate.volume).sort()).toEqual([0.2, 0.4, 0.6]);
    const t = await runCli(['rules', 'preview', '--account', x1.id, '--multiplier', '2'], env);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toContain('3 copies, 3 changed; volume 0.6 -> 1.2 (+0.6)');
    const same = await runCli(['rules', 'preview', '--account', x1.id], env);
    expect(same.stdout).toContain('no copy changes');
    const year = await runCli(['rules', 'preview', '--account', x1.id, '--days', '365'], env);
    expect(year.code).not.toBe(0);
    expect(year.stderr).toContain('at most 90');
  });
});
