import { createServer } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers/service.js';
import { runCli } from './helpers/cli-run.js';

/**
 * The trader's commands against the demo: each one's table for people, its --json for scripts, and failures as
 * a non-zero exit with the service's error code printed.
 */
let svc: TestService;
let env: Record<string, string>;
let master: { id: string; groupId: string };
let slave: { id: string };
const dir = mkdtempSync(join(tmpdir(), 'ct-cli-trading-'));

const ct = (...args: string[]) => runCli(args, env);
const json = async <T = any>(...args: string[]): Promise<T> => {
  const r = await ct(...args, '--json');
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as T;
};

beforeAll(async () => {
  svc = await startTestService();
  env = { COPYTRADE_URL: svc.v1BaseUrl, COPYTRADE_API_KEY: svc.demo!.apiKey };
  const accounts = (await svc.call('GET', '/v1/accounts', { token: svc.demo!.apiKey })).body.accounts as Array<{
    id: string;
    name: string;
    role: string;
    groupId: string;
  }>;
  master = accounts.find((a) => a.name === 'Demo Master')!;
  slave = accounts.find((a) => a.name === 'Demo Slave 1 (x1)')!;
}, 120_000);
afterAll(async () => {
  await svc?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('copytrade trading commands (family V with an API key)', () => {
  it('accounts list: a table for people, the API answer with --json; the key from a flag, the environment or the config file', async () => {
    const table = await ct('accounts', 'list');
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+PLATFORM\s+ROLE\s+STATUS\s+HEALTH/);
    // The table names the broker platform; the API (--json below) keeps the spec's codes.
    expect(table.stdout).toMatch(new RegExp(`${master.id}\\s+Demo Master\\s+Simulator\\s+master\\s+connected`));
    expect(table.stdout).toMatch(/\sTradeLocker\s/);
    expect(table.stdout).not.toMatch(/\splatform[abc]\s/);

    const viaFlags = await runCli(['accounts', 'list', '--json', '--url', svc.v1BaseUrl, '--key', svc.demo!.apiKey]);
    expect(viaFlags.code, viaFlags.stderr).toBe(0);
    expect(JSON.parse(viaFlags.stdout).accounts.map((a: { id: string }) => a.id)).toContain(master.id);
    expect(JSON.parse(viaFlags.stdout).accounts.map((a: { platform: string }) => a.platform)).toContain('platformb');

    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ url: svc.v1BaseUrl, apiKey: svc.demo!.apiKey }));
    const viaFile = await runCli(['accounts', 'list', '--json'], { COPYTRADE_CONFIG: file });
    expect(viaFile.code, viaFile.stderr).toBe(0);
    expect(JSON.parse(viaFile.stdout).accounts).toHaveLength(JSON.parse(viaFlags.stdout).accounts.length);
  }, 120_000);

  it('orders send, positions, trades show, ledger: one order copied, its ledger row per Slave', async () => {
    const sent = await json<{ tradeId: string; status: string; copiedTo: number }>(
      'orders',
      'send',
      master.id,
      '--symbol',
      'EURUSD',
      '--side',
      'buy',
      '--volume',
      '0.1',
      '--sl',
      '1.05',
      '--tp',
      '1.2',
    );
    expect(sent).toMatchObject({ status: 'accepted', tradeId: expect.stringMatching(/^trd_/) });
    expect(sent.copiedTo).toBeGreaterThanOrEqual(8);

    const human = await ct('orders', 'send', master.id, '--symbol', 'EURUSD', '--side', 'sell', '--volume', '0.1');
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/trade\s+trd_\S+\nstatus\s+accepted/);

    const positions = await json<{ positions: Array<{ symbol: string; side: string; volume: number }> }>(
      'positions',
      master.id,
    );
    expect(positions.positions.filter((p) => p.symbol === 'EURUSD')).toHaveLength(2);
    expect((await ct('positions', master.id)).stdout).toMatch(/^ID\s+SYMBOL\s+SIDE\s+VOLUME/);

    // Accepted is not filled: the ledger rows settle on their own; the CLI shows them as they are.
    await expect
      .poll(
        async () =>
          (await json<{ copies: Array<{ outcome: string }> }>('trades', 'show', sent.tradeId)).copies.filter(
            (c) => c.outcome === 'confirmed',
          ).length,
        { timeout: 60_000, interval: 500 },
      )
      .toBeGreaterThanOrEqual(8);
    const shown = await ct('trades', 'show', sent.tradeId);
    expect(shown.stdout).toContain(`trade       ${sent.tradeId}`);
    expect(shown.stdout).toMatch(new RegExp(`${slave.id}\\s+open\\s+EURUSD\\s+buy\\s+0\\.1\\s+confirmed`));

    const trades = await json<{ trades: Array<{ tradeId: string }> }>('ledger', '--limit', '5');
    expect(trades.trades.map((t) => t.tradeId)).toContain(sent.tradeId);
    const rows = await json<{ entries: Array<{ accountId: string; outcome: string }> }>(
      'ledger',
      '--account',
      slave.id,
    );
    expect(rows.entries.length).toBeGreaterThanOrEqual(2);
    expect(rows.entries.every((e) => e.accountId === slave.id)).toBe(true);
  }, 240_000);

  it('groups, rules get and rules set (a change keeps the rest of the rule)', async () => {
    const groups = await json<{ groups: Array<{ id: string; name: string }> }>('groups');
    expect(groups.groups.map((g) => g.name).sort()).toEqual(['Demo group', 'MetaTrader master group']);
    const one = await ct('groups', master.groupId);
    expect(one.stdout).toMatch(new RegExp(`master\\s+${master.id} Demo Master`));

    expect(await json('rules', 'get', slave.id)).toMatchObject({
      sizing: { mode: 'multiplier', multiplier: 1 },
      reverse: false,
    });
    const set = await json('rules', 'set', slave.id, '--multiplier', '0.5', '--exclude', 'XAUUSD');
    expect(set).toMatchObject({ sizing: { mode: 'multiplier', multiplier: 0.5 }, excludeSymbols: ['XAUUSD'] });
    const again = await json('rules', 'set', slave.id, '--reverse');
    expect(again).toMatchObject({
      sizing: { mode: 'multiplier', multiplier: 0.5 },
      excludeSymbols: ['XAUUSD'],
      reverse: true,
    });
    const filtered = await json(
      'rules',
      'set',
      slave.id,
      '--sides',
      'sell',
      '--include-magic',
      '1001,2002',
      '--exclude-comment',
      'news, hedge',
    );
    expect(filtered).toMatchObject({
      reverse: true,
      sides: 'sell',
      includeMagic: [1001, 2002],
      excludeComments: ['news', 'hedge'],
    });
    expect(await json('rules', 'get', slave.id)).toEqual(filtered);
    const badMagic = await ct('rules', 'set', slave.id, '--include-magic', '12a');
    expect(badMagic.code).toBe(1);
    expect(badMagic.stderr).toContain('--include-magic takes magic numbers');

    const master409 = await ct('rules', 'get', master.id);
    expect(master409.code).toBe(1);
    expect(master409.stderr).toContain('copy rules belong to Slaves');
  }, 240_000);

  it('events tail follows the stream (replay from a cursor, then live) and stops after --count', async () => {
    const r = await ct('events', 'tail', '--cursor', '0', '--count', '3', '--json');
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { cursor: string; type: string; id: string });
    expect(lines).toHaveLength(3);
    // Cursors are opaque (issue 46): they are the ones the list route gives for the same first events.
    const listed = (await svc.call('GET', '/v1/events?limit=3', { token: svc.demo!.apiKey })).body.events;
    expect(lines.map((l) => l.cursor)).toEqual(listed.map((e: { cursor: string }) => e.cursor));
    expect(lines[0]).toMatchObject({ id: expect.any(String), type: expect.any(String) });

    // From now: only what happens after the tail started.
    const tail = ct('events', 'tail', '--count', '1', '--json');
    await expect
      .poll(
        async () => {
          await svc.call('POST', `/v1/accounts/${slave.id}/pause`, { token: svc.demo!.apiKey });
          await svc.call('POST', `/v1/accounts/${slave.id}/resume`, { token: svc.demo!.apiKey });
          return Promise.race([tail.then(() => true), new Promise((r) => setTimeout(() => r(false), 1000))]);
        },
        { timeout: 60_000, interval: 200 },
      )
      .toBe(true);
    const live = await tail;
    expect(live.code, live.stderr).toBe(0);
    const later = await svc.call('GET', `/v1/events?limit=1000&cursor=${lines[2]!.cursor}`, {
      token: svc.demo!.apiKey,
    });
    expect(later.body.events.map((e: { cursor: string }) => e.cursor)).toContain(JSON.parse(live.stdout.trim()).cursor);
  }, 240_000);

  it('failures: the error code printed, a non-zero exit, and with --json a JSON error', async () => {
    const unknown = await ct('positions', 'acc_unknown');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^copytrade: not_found: .*\(request req_\S+\)\n$/);
    const unknownJson = await ct('trades', 'show', 'trd_unknown', '--json');
    expect(unknownJson.code).toBe(1);
    expect(JSON.parse(unknownJson.stdout)).toMatchObject({
      code: 'not_found',
      status: 404,
      requestId: expect.stringMatching(/^req_/),
    });

    const refused = await ct('orders', 'send', slave.id, '--symbol', 'EURUSD', '--side', 'buy', '--volume', '0.1');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('copytrade: account_not_master:');

    const badKey = await runCli(['accounts', 'list'], { COPYTRADE_URL: svc.v1BaseUrl, COPYTRADE_API_KEY: 'ctk_wrong' });
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toContain('copytrade: unauthorized:');
    const noKey = await runCli(['accounts', 'list'], { COPYTRADE_URL: svc.v1BaseUrl });
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toContain('no API key: pass --key, set COPYTRADE_API_KEY');

    const usage = await ct('orders', 'send', master.id, '--symbol', 'EURUSD', '--side', 'up', '--volume', '0.1');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("option '--side <side>' argument 'up' is invalid");

    const closed = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
    });
    const down = await runCli(['accounts', 'list'], {
      COPYTRADE_URL: `http://127.0.0.1:${closed}`,
      COPYTRADE_API_KEY: svc.demo!.apiKey,
    });
    expect(down.code).toBe(3);
    expect(down.stderr).toContain('copytrade: unreachable: cannot reach the service (ECONNREFUSED)');
  }, 240_000);

  it('panic-close --account and --group follow the job until flat (progress lines when not on a terminal)', async () => {
    const acc = await ct('panic-close', '--account', slave.id);
    expect(acc.code, acc.stderr).toBe(0);
    expect(acc.stderr).toMatch(/panic-close job_\S+: \d+\/\d+ positions, [01]\/1 accounts flat/);
    expect(acc.stdout).toMatch(/^flat: \d+ closed, 0 failed, 0 remaining/);
    expect((await json<{ positions: unknown[] }>('positions', slave.id)).positions).toEqual([]);

    const group = await json<{ state: string; scope: string; totals: { remaining: number; accounts: number } }>(
      'panic-close',
      '--group',
      master.groupId,
    );
    expect(group).toMatchObject({ state: 'succeeded', scope: 'group', totals: { remaining: 0 } });
    expect(group.totals.accounts).toBeGreaterThanOrEqual(9);
    expect((await json<{ positions: unknown[] }>('positions', master.id)).positions).toEqual([]);

    const neither = await ct('panic-close');
    expect(neither.code).toBe(1);
    expect(neither.stderr).toContain('copytrade: invalid_request: say what to close');

    // The lock the job left is lifted from the CLI: the group at once, then one account paused and resumed.
    const statusOf = async (id: string) =>
      (await svc.call('GET', `/v1/accounts/${id}`, { token: svc.demo!.apiKey })).body.status as string;
    expect(await statusOf(master.id)).toBe('locked');
    const resumed = await ct('resume', '--group', master.groupId);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(new RegExp(`${master.id}\\s+Demo Master\\s+master\\s+connected`));
    expect(await statusOf(master.id)).toBe('connected');
    expect(await statusOf(slave.id)).toBe('connected');
    expect((await json<{ status: string }>('pause', '--account', slave.id)).status).toBe('paused');
    const one = await ct('resume', '--account', slave.id);
    expect(one.stdout).toContain(`${slave.id} (Demo Slave 1 (x1)): connected`);
    const what = await ct('resume');
    expect(what.code).toBe(1);
    expect(what.stderr).toContain('say what to resume: --account <id> or --group <id>');
  }, 240_000);
  it('accounts test: the connection test read at the broker, as fields and with --json', async () => {
    const r = await ct('accounts', 'test', slave.id);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^test\s+passed$/m);
    expect(r.stdout).toMatch(/^balance\s+\d/m);
    const j = await json<{ id: string; status: string; connectionTest: { ok: boolean; positions: number } }>(
      'accounts',
      'test',
      slave.id,
    );
    expect(j).toMatchObject({ id: slave.id, status: 'connected', connectionTest: { ok: true } });
    expect(j.connectionTest.positions).toEqual(expect.any(Number));
    const unknown = await ct('accounts', 'test', 'acc_unknown');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/copytrade: not_found/);
  }, 60_000);
});
