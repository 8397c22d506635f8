import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Demo mode's wizards can connect something (issue 14): the demo keeps spare simulated accounts of platforms
 * A, B and C unconnected and serves their logins at a demo-only route; the platform A server search lists
 * MetaTrader servers only.
 */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
}, 60_000);
afterAll(async () => svc?.close());

describe('demo broker logins', () => {
  it('lists two spare accounts per platform, none of them connected, only to a signed-in user', async () => {
    expect((await svc.call('GET', '/app/demo/broker-logins')).status).toBe(401);
    const r = await svc.call('GET', '/app/demo/broker-logins', { token: svc.demo!.accessToken });
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body.platforma).toHaveLength(2);
    expect(r.body.platformb).toHaveLength(2);
    expect(r.body.platformc).toHaveLength(2);
    expect((await svc.call('GET', '/openapi.json')).body.paths['/app/demo/broker-logins'].get['x-open-point']).toBe(
      true,
    );
    const connected = (await svc.store.accounts.all()).map((a) => a.brokerAccountNumber);
    for (const x of [
      ...r.body.platforma.map((a: any) => a.login),
      ...r.body.platformb.map((b: any) => b.accountNumber),
      ...r.body.platformc.map((c: any) => c.accountNumber),
    ]) {
      expect(connected).not.toContain(x);
    }
  });

  it("the spare platform A and B logins connect through the wizards' routes", async () => {
    const email = `demo-wizard-${Date.now()}@example.test`;
    await svc.deps.auth.createUser(email, 'password-123');
    const token = (await svc.call('POST', '/app/sign-in', { body: { email, password: 'password-123' } })).body
      .accessToken;
    const logins = (await svc.call('GET', '/app/demo/broker-logins', { token })).body;
    const b = logins.platformb[0];
    const d = await svc.call('POST', '/api/connect/platformb/discover', {
      token,
      body: { environment: b.environment, server: b.server, email: b.email, password: b.password },
    });
    expect(d.status, JSON.stringify(d.body)).toBe(200);
    expect(d.body.accounts).toHaveLength(2); // both spare B accounts share the login: the wizard's pick step shows
    const pick = d.body.accounts.find((x: any) => x.accountNumber === b.accountNumber);
    expect(
      (
        await svc.call('POST', '/api/connect/platformb/confirm', {
          token,
          body: { connectionId: d.body.connectionId, accountId: pick.accountId, accountNumber: pick.accountNumber },
        })
      ).status,
    ).toBe(201);
    const a = logins.platforma[0];
    const c = await svc.call('POST', '/api/connect/platforma', {
      token,
      body: { platform: a.platform, server: a.server, login: a.login, password: a.password },
    });
    expect(c.status, JSON.stringify(c.body)).toBe(201);
    expect(c.body.accountNumber).toBe(a.login);
  }, 60_000);

  it('lists only spares no one has connected: a connected login (and a login it shares) is gone for everyone', async () => {
    // The test above connected the first platform A spare and one platform B spare (both B spares share a login).
    const connected = new Set((await svc.store.accounts.all()).map((a) => `${a.platform}:${a.brokerAccountNumber}`));
    const r = await svc.call('GET', '/app/demo/broker-logins', { token: svc.demo!.accessToken });
    expect(r.status).toBe(200);
    expect(r.body.platforma.length).toBe(1);
    for (const a of r.body.platforma) expect(connected.has(`platforma:${a.login}`)).toBe(false);
    // The B login reaches an account someone connected: its password is not handed out any more.
    expect(r.body.platformb).toEqual([]);
    expect(r.body.platformc).toHaveLength(2);
  });

  it('the platform A server search lists MetaTrader servers, not platform B ones', async () => {
    const r = await svc.call('GET', '/api/connect/platforma/servers?query=SIM&platform=mt5', {
      token: svc.demo!.accessToken,
    });
    expect(r.status).toBe(200);
    const servers = r.body.servers.flatMap((s: any) => s.servers);
    expect(servers).toContain('SimA-Demo');
    expect(servers.some((s: string) => /SIMB/i.test(s))).toBe(false);
  });
});
