import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { alertKindOf, enabledKinds } from '../../src/alerts/alert-kinds.js';
import { HealthMonitor } from '../../src/engine/health/monitor.js';
import { SimulatedEa } from '../../src/simulator/ea/sim-ea.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
const eas: SimulatedEa[] = [];

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  for (const ea of eas) await ea.stop();
  await svc?.close();
});

async function userToken(email: string): Promise<string> {
  await svc.deps.auth.createUser(email, 'password-123');
  return (await svc.call('POST', '/app/sign-in', { body: { email, password: 'password-123' } })).body.accessToken;
}

describe('platform A, self-hosted: the terminal bridge through the API', () => {
  it('creates the account and a token shown once, turns connected when the EA says hello, rotates and revokes', async () => {
    const token = await userToken('bridge-owner@example.com');
    const sim = svc.broker.createAccount({
      login: '88001',
      balance: '5000',
      hedging: false,
      meta: { server: 'SimA-Self' },
    });
    const created = await svc.call('POST', '/api/connect/platforma/bridge', {
      token,
      body: { server: 'SimA-Self', login: '88001' },
    });
    expect(created.status, created.text).toBe(201);
    const { account, token: first, bridge } = created.body;
    expect(account).toMatchObject({ platform: 'platforma', accountNumber: '88001' });
    expect(first.token).toMatch(/^ctbt_/);
    expect(bridge.url).toBe(`${svc.baseUrl.replace('http', 'ws')}/bridge/v1/ws`);
    expect(bridge.pollUrl).toBe(`${svc.baseUrl}/bridge/v1/poll`);
    expect(bridge.allowList).toBe(svc.baseUrl);
    // Stored hashed only, never logged.
    const rows = await svc.store.bridgeTokens.byAccount(account.id);
    expect(rows.map((r) => r.hash)).not.toContain(first.token);
    expect(svc.logs.join('')).not.toContain(first.token);

    const status = async () => (await svc.call('GET', `/api/connect/platforma/bridge/${account.id}`, { token })).body;
    expect((await status()).status).toMatchObject({ connected: false, helloAt: null, heartbeatAgeSec: null });

    const ea = new SimulatedEa({
      broker: svc.broker,
      accountId: sim.id,
      url: bridge.url,
      token: first.token,
      manualHeartbeat: true,
    });
    eas.push(ea);
    ea.start();
    await ea.whenWelcomed();
    ea.heartbeat();
    await expect.poll(async () => (await status()).status.heartbeatAgeSec, { timeout: 5_000 }).not.toBeNull();
    expect((await status()).status).toMatchObject({ connected: true, marginMode: 'netting', ea: 'sim-1.0.0' });

    // The account's adapter is the bridge's, and its capabilities follow what the EA said (netting).
    const stored = (await svc.store.accounts.byId(account.id))!;
    expect((await svc.deps.adapters.forAccount(stored)).capabilities).toMatchObject({ hedging: false });
    const info = await (await svc.deps.adapters.forAccount(stored)).accountInfo();
    expect(info.balance.toString()).toBe('5000');

    // Another user sees a 404, as for an unknown id.
    const other = await userToken('someone-else@example.com');
    expect((await svc.call('GET', `/api/connect/platforma/bridge/${account.id}`, { token: other })).status).toBe(404);
    expect((await svc.call('GET', '/api/connect/platforma/bridge/acc_nope', { token })).status).toBe(404);

    // Rotation: a new token; the old one keeps working during the overlap. Revocation closes its connection.
    const rotated = await svc.call('POST', `/api/connect/platforma/bridge/${account.id}/tokens`, { token, body: {} });
    expect(rotated.status).toBe(201);
    expect(await svc.deps.bridge!.tokens.verify(first.token)).not.toBeNull();
    const connects = ea.connects;
    const revoked = await svc.call('DELETE', `/api/connect/platforma/bridge/${account.id}/tokens/${first.tokenId}`, {
      token,
    });
    expect(revoked.status).toBe(204);
    await expect.poll(() => ea.errors.some((e) => e.code === 'token_revoked'), { timeout: 5_000 }).toBe(true);
    expect(await svc.deps.bridge!.tokens.verify(first.token)).toBeNull();
    expect(ea.connects).toBe(connects);
    expect(
      (
        await svc.call('DELETE', `/api/connect/platforma/bridge/${account.id}/tokens/${first.tokenId}`, {
          token: other,
        })
      ).status,
    ).toBe(404);
  }, 30_000);

  it("health shows the EA's heartbeat; an EA silent past silentAfterSec marks the account disconnected at once", async () => {
    const token = await userToken('bridge-health@example.com');
    const sim = svc.broker.createAccount({
      login: '88002',
      balance: '7000',
      hedging: true,
      meta: { server: 'SimA-Self' },
    });
    const created = await svc.call('POST', '/api/connect/platforma/bridge', {
      token,
      body: { server: 'SimA-Self', login: '88002' },
    });
    expect(created.status, created.text).toBe(201);
    const { account, token: issued, bridge } = created.body;
    const ea = new SimulatedEa({
      broker: svc.broker,
      accountId: sim.id,
      url: bridge.url,
      token: issued.token,
      manualHeartbeat: true,
    });
    eas.push(ea);
    ea.start();
    await ea.whenWelcomed();
    ea.heartbeat();
    const status = async () =>
      (await svc.call('GET', `/api/connect/platforma/bridge/${account.id}`, { token })).body.status;
    await expect.poll(async () => (await status()).equity, { timeout: 5_000 }).toBe('7000');
    expect(await status()).toMatchObject({ connected: true, silent: false, balance: '7000', tradeAllowed: true });
    expect(Date.parse((await status()).lastSeenAt)).toBeGreaterThan(Date.now() - 60_000);

    // Not about pressure (test/engine/health-pressure.test.ts is): an outage would be called only after 10 minutes.
    const monitor = new HealthMonitor(svc.store, svc.deps.adapters, {
      intervalMs: 60_000,
      staleAfterMs: 600_000,
      downAfterMs: 600_000,
      checkTimeoutMs: 30_000,
      loopStalledMs: () => 0,
    });
    const read = async () => (await svc.store.accounts.byId(account.id))!;
    expect(await monitor.check(await read())).toMatchObject({ connected: true });
    expect((await read()).status).toBe('connected');

    // The EA stays connected but says nothing: past silentAfterSec (default 30 s) the account is disconnected.
    const silentAfter = (await status()).silentAfterSec;
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + (silentAfter + 1) * 1000);
      expect(await status()).toMatchObject({ connected: true, silent: true });
      expect(await monitor.check(await read())).toMatchObject({ connected: false, state: 'down' });
    } finally {
      vi.useRealTimers();
    }
    const down = await read();
    expect(down.status).toBe('disconnected');
    expect(down.statusReason).toMatch(/silent/);
    const events = (await svc.store.events.after(down.userId, 0, 1000)).filter((e) => e.accountId === account.id);
    const changed = events.find((e) => e.type === 'account.status_changed');
    expect(changed?.payload).toMatchObject({ after: 'disconnected' });
    // The existing disconnect alert is raised from that event.
    expect(alertKindOf(changed!.type, changed!.payload as Record<string, unknown>, enabledKinds([]))?.kind).toBe(
      'account_disconnected',
    );

    // It beats again: connected again at the next check.
    ea.heartbeat();
    await expect.poll(async () => (await status()).silent, { timeout: 5_000 }).toBe(false);
    await monitor.check(await read());
    expect((await read()).status).toBe('connected');
  }, 30_000);

  it('a group named at creation is refused with the reason, not dropped without a word (the account would stay unassigned)', async () => {
    const token = await userToken('bridge-grouped@example.com');
    const group = await svc.call('POST', '/app/v1/copier-groups', { token, body: { name: 'bridge group' } });
    expect(group.status, group.text).toBe(201);
    const r = await svc.call('POST', '/api/connect/platforma/bridge', {
      token,
      body: { server: 'SimA-Self', login: '88003', groupId: group.body.id },
    });
    expect(r.status, r.text).toBe(400);
    expect(r.body.code).toBe('invalid_request');
    expect(r.body.error).toMatch(/^groupId: .*once its EA has connected/);
    expect((await svc.store.accounts.all()).filter((a) => a.brokerAccountId === '88003')).toEqual([]);
  }, 30_000);
});
