import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
});
