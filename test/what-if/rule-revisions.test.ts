import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runAdminOp } from '../../src/admin/ops.js';
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
let x1: Acc;
const revisions = async (path: string, token = key) =>
  (await svc.call('GET', `${path}/rule-revisions`, { token })).body.revisions as Array<any>;

beforeAll(async () => {
  svc = await startTestService();
  key = svc.demo!.apiKey;
  const accounts = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts as Acc[];
  master = accounts.find((a) => a.role === 'master' && a.platform === 'sim')!;
  x1 = accounts.find((a) => a.role === 'slave' && a.groupId === master.groupId && a.name.includes('(x1)'))!;
}, 60_000);
afterAll(async () => svc?.close());

describe('rule revisions', () => {
  it('number each change of a rule or of risk limits, with who and the diff, and roll back in one call', async () => {
    const put = await svc.call('PUT', `/v1/accounts/${x1.id}/copy-rule`, {
      token: key,
      body: { sizing: { mode: 'multiplier', multiplier: 3 } },
    });
    expect(put.status).toBe(200);
    let list = await revisions(`/v1/accounts/${x1.id}`);
    // Revision 1 is what the demo had set before the first recorded change.
    expect(list.map((r) => [r.revision, r.source])).toEqual([
      [2, 'copy_rule'],
      [1, 'initial'],
    ]);
    expect(list[1].snapshot.rule.sizing).toEqual({ mode: 'multiplier', multiplier: 1 });
    expect(list[0].diff).toEqual([{ field: 'rule.sizing.multiplier', before: '1', after: '3' }]);
    expect(list[0].actor).toMatch(/^key:/);

    // The same rule again changes nothing: no revision.
    await svc.call('PUT', `/v1/accounts/${x1.id}/copy-rule`, {
      token: key,
      body: { sizing: { mode: 'multiplier', multiplier: 3 } },
    });
    expect((await revisions(`/v1/accounts/${x1.id}`)).length).toBe(2);

    const risk = await svc.call('PUT', `/v1/accounts/${x1.id}/risk-limits`, { token: key, body: { maxOpenVolume: 5 } });
    expect(risk.status).toBe(200);
    list = await revisions(`/v1/accounts/${x1.id}`);
    expect(list[0]).toMatchObject({ revision: 3, source: 'risk_limits' });
    expect(list[0].diff).toContainEqual({ field: 'riskLimits.maxOpenVolume', before: null, after: '5' });

    // The same limits with resetPeak: no revision (nothing of the limits changed), but the peak is reset.
    await svc.store.riskLimits.setState(x1.id, { peakEquity: '12345', lastBreach: null });
    const reset = await svc.call('PUT', `/v1/accounts/${x1.id}/risk-limits`, {
      token: key,
      body: { maxOpenVolume: 5, resetPeak: true },
    });
    expect(reset.status).toBe(200);
    expect((await revisions(`/v1/accounts/${x1.id}`))[0].revision).toBe(3);
    expect(((await svc.store.riskLimits.get(x1.id))!.state as { peakEquity: unknown }).peakEquity).toBeNull();

    const back = await svc.call('POST', `/v1/accounts/${x1.id}/rule-revisions/rollback`, {
      token: key,
      body: { revision: 1 },
    });
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ revision: 4, source: 'rollback', rolledBackTo: 1 });
    expect(back.body.snapshot).toEqual(list.at(-1).snapshot);
    expect(back.body.diff).toContainEqual({ field: 'rule.sizing.multiplier', before: '3', after: '1' });
    const group = (await svc.call('GET', `/v1/copier-groups/${master.groupId}`, { token: key })).body;
    expect(group.slaves.find((s: Acc) => s.id === x1.id).rule.sizing).toEqual({ mode: 'multiplier', multiplier: 1 });
    const limits = (await svc.call('GET', `/v1/accounts/${x1.id}/risk-limits`, { token: key })).body;
    expect(limits.limits?.maxOpenVolume ?? null).toBeNull();

    const unknown = await svc.call('POST', `/v1/accounts/${x1.id}/rule-revisions/rollback`, {
      token: key,
      body: { revision: 99 },
    });
    expect(unknown.status).toBe(404);
  });

  it("name the Slave's revision on every new ledger row and in its receipt, which verify accepts", async () => {
    const latest = (await revisions(`/v1/accounts/${x1.id}`))[0].revision as number;
    const r = await svc.call('POST', `/v1/accounts/${master.id}/orders`, {
      token: key,
      body: { symbol: 'EURUSD', side: 'buy', volume: 0.1 },
    });
    expect(r.status).toBe(202);
    await vi.waitFor(
      async () => {
        const rows = await exec<{ state: string; rule_revision: number | null }>(
          sql`select state, rule_revision from copy_intents where slave_account_id = ${x1.id}`,
        );
        if (rows.length === 0 || rows.some((x) => !['confirmed', 'rejected', 'denied', 'skipped'].includes(x.state)))
          throw new Error('not ended');
        expect(rows.map((x) => x.rule_revision)).toEqual([latest]);
      },
      { timeout: 20_000, interval: 50 },
    );
    await vi.waitFor(
      async () => {
        const [n] = await exec<{ open: number }>(
          sql`select count(*) filter (where state not in ('confirmed','rejected','denied','skipped'))::int as open from copy_intents`,
        );
        if (n!.open > 0) throw new Error('copies not ended');
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(await svc.sealer.runOnce(0)).toBeGreaterThan(0);
    const [body] = await exec<{ body: string }>(sql`select body from receipts where account_id = ${x1.id}`);
    expect(JSON.parse(body!.body).ruleRevision).toBe(latest);
    const v = (await runAdminOp({ store: svc.store, auth: svc.deps.auth }, 'receipts.verify', {
      publicKeys: [svc.deps.receiptKey!.current.pem],
    })) as { ok: boolean };
    expect(v.ok).toBe(true);
  });

  it("keep a group's risk limits as the group's revisions; another user's target is the same 404", async () => {
    const put = await svc.call('PUT', `/v1/copier-groups/${master.groupId}/risk-limits`, {
      token: key,
      body: { dailyLossLimit: 100 },
    });
    expect(put.status).toBe(200);
    const list = await revisions(`/v1/copier-groups/${master.groupId}`);
    expect(list[0]).toMatchObject({ scope: 'group', source: 'risk_limits' });
    expect(list[0].snapshot).not.toHaveProperty('rule');

    const other = await svc.deps.auth.createUser(`rev-${Date.now()}@example.test`, 'a long enough password 1');
    const { apiKey } = await svc.deps.auth.createApiKey(other.id, 'test');
    for (const [mine, none] of [
      [`/v1/accounts/${x1.id}`, '/v1/accounts/acc_unknown'],
      [`/v1/copier-groups/${master.groupId}`, '/v1/copier-groups/grp_unknown'],
    ] as const) {
      const foreign = await svc.call('GET', `${mine}/rule-revisions`, { token: apiKey });
      const unknown = await svc.call('GET', `${none}/rule-revisions`, { token: apiKey });
      expect(foreign.status).toBe(404);
      expect([foreign.body.code, foreign.body.error]).toEqual([unknown.body.code, unknown.body.error]);
      const roll = await svc.call('POST', `${mine}/rule-revisions/rollback`, { token: apiKey, body: { revision: 1 } });
      expect(roll.status).toBe(404);
    }
  });

  it('copytrade rules revisions and rollback', async () => {
    const env = { COPYTRADE_URL: svc.v1BaseUrl, COPYTRADE_API_KEY: key };
    const set = await runCli(['rules', 'set', x1.id, '--multiplier', '0.7'], env);
    expect(set.code, set.stderr).toBe(0);
    const list = await runCli(['rules', 'revisions', '--account', x1.id], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/rule\.sizing\.multiplier: "1" -> "0\.7"/);
    const n = (await revisions(`/v1/accounts/${x1.id}`))[0].revision as number;
    const back = await runCli(['rules', 'rollback', '--account', x1.id, '--to', String(n - 1), '--json'], env);
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({ revision: n + 1, rolledBackTo: n - 1 });
    const none = await runCli(['rules', 'revisions'], env);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('--account <id> or --group <id>');
  });
});
