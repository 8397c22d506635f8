import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectSimulator } from '../../src/demo/simulator-client.js';
import { runSimulator } from '../../src/demo/simulator-process.js';
import { listAccountsForToken } from '../../src/platforms/ctrader/oauth.js';
import { provisionMtAccount } from '../../src/platforms/metatrader/connect.js';

/**
 * Issue 14: a demo restart links nothing again because the `copytrade simulator` process keeps, like real
 * upstreams, the cTrader ID tokens and MetaApi accounts it gave out, across its own restart.
 */
const dir = mkdtempSync(join(tmpdir(), 'ct-sim-keeps-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function started() {
  const run = await runSimulator({ dataDir: dir });
  return { run, sim: await connectSimulator(run.endpointsFile) };
}

describe('copytrade simulator restarted on its state dir', () => {
  it('still honours the cTrader tokens and MetaApi accounts it gave out, under the same stateId', {
    timeout: 120_000,
  }, async () => {
    const first = await started();
    const c = await first.sim.createAccount({
      balance: '1000',
      meta: { ctidUserId: 'keep-user', environment: 'demo' },
    });
    const a = await first.sim.createAccount({
      balance: '1000',
      meta: { server: 'Keep-Demo', password: 'pw-keep-1', platform: 'mt5' },
    });
    const tokens = await first.sim.issueCTraderToken('keep-user');
    const mt = first.sim.endpoints.platforma;
    const provisioned = await provisionMtAccount({
      ...mt,
      server: 'Keep-Demo',
      login: a.login,
      password: 'pw-keep-1',
      platform: 'mt5',
      pollMs: 50,
      waitMs: 30_000,
    });
    const stateId = first.sim.stateId;
    expect(stateId).toMatch(/^[0-9a-f-]{36}$/);
    await first.run.close();

    const second = await started();
    try {
      expect(second.sim.stateId).toBe(stateId);
      const ct = second.sim.endpoints.platformc;
      const listed = await listAccountsForToken({
        endpoint: ct.endpoint('demo'),
        clientId: ct.clientId,
        clientSecret: ct.clientSecret,
        accessToken: tokens.accessToken,
      });
      expect(listed.accounts.map((x) => x.ctidTraderAccountId)).toContain(c.ctidTraderAccountId);
      const res = await fetch(
        `${second.sim.endpoints.platforma.baseUrl}/users/current/accounts/${provisioned.accountId}`,
        {
          headers: { 'auth-token': second.sim.endpoints.platforma.token },
        },
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ _id: provisioned.accountId, state: 'DEPLOYED' });
    } finally {
      await second.run.close();
    }
  });
});
