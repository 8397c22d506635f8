import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { until } from '../helpers/cli-process.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ env: { COPYTRADE_DEMO_BRIDGE: '1' } });
}, 180_000);
afterAll(async () => svc?.close());

interface AccountView {
  id: string;
  name: string;
  role: string;
  groupId: string;
  platform: string;
}

describe('demo: a MetaTrader account on the terminal bridge', () => {
  it("is a Slave of the demo group whose simulated EA dials the service's own bridge, and it copies", async () => {
    const key = svc.demo!.apiKey;
    const accounts: AccountView[] = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts;
    const master = accounts.find((a) => a.name === 'Demo Master')!;
    const bridged = accounts.find((a) => a.name.startsWith('Demo MT5 Slave (self-hosted bridge'));
    expect(bridged).toMatchObject({ platform: 'platforma', role: 'slave', groupId: master.groupId });

    const status = async () =>
      (await svc.call('GET', `/api/connect/platforma/bridge/${bridged!.id}`, { token: svc.demo!.accessToken })).body;
    await until('the EA said hello', async () => (await status()).status?.connected === true, 20_000);
    expect((await status()).status).toMatchObject({ ea: 'sim-1.0.0', marginMode: 'hedging' });

    const sent = await svc.call('POST', `/v1/accounts/${master.id}/orders`, {
      token: key,
      body: { symbol: 'EURUSD', side: 'buy', volume: 0.1 },
    });
    expect(sent.status, sent.text).toBe(202);
    const positions = async () =>
      (await svc.call('GET', `/v1/accounts/${bridged!.id}/positions`, { token: key })).body.positions ?? [];
    await until('the copy reached the bridge account', async () => (await positions()).length === 1, 30_000);
    expect((await positions())[0]).toMatchObject({ symbol: 'EURUSD', side: 'buy' });
  }, 90_000);
});
