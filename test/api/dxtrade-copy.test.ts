import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Decimal } from '../../src/domain/decimal.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * DXtrade in the whole service (demo mode, simulated brokers, the real adapters over loopback): the demo
 * Master's trade reaches the demo's DXtrade Slave with its SL and TP, and a DXtrade Master's trade, made at its
 * broker, reaches a TradeLocker Slave (the DXtrade adapter's polled events and deal history drive the copy).
 */
let svc: TestService;
let token: string;

/** Waits on a condition (vitest's own waiter), never a fixed sleep. */
const eventually = <T>(what: string, fn: () => T | undefined | false): Promise<T> =>
  vi.waitFor(
    () => {
      const v = fn();
      if (!v) throw new Error(`still waiting for ${what}`);
      return v;
    },
    { timeout: 30_000, interval: 50 },
  );

beforeAll(async () => {
  svc = await startTestService();
  token = svc.demo!.accessToken;
  svc.broker.setPrice('EURUSD', '1.10000');
}, 60_000);
afterAll(async () => svc?.close());

const simOfCode = (code: string) => svc.broker.accounts().find((a) => `default:${a.login}` === code)!;

describe('copying to and from DXtrade', () => {
  it('the demo Master (simulator) -> the demo DXtrade Slave: opened with SL/TP at x1, then closed', async () => {
    const all = await svc.store.accounts.all();
    const master = all.find((a) => a.platform === 'sim' && a.role === 'master' && a.name === 'Demo Master')!;
    const d = all.find((a) => a.platform === 'platformd' && a.name === 'Demo DXtrade Slave')!;
    const dSim = simOfCode(d.brokerAccountId);
    const opened = svc.broker.placeOrder(master.brokerAccountId, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: new Decimal('0.1'),
      stopLoss: new Decimal('1.09000'),
      takeProfit: new Decimal('1.12000'),
      tag: 'dx-copy-open',
    }).position!;
    const copy = await eventually('the DXtrade copy', () => svc.broker.positions(dSim.id)[0]);
    expect({ side: copy.side, volume: copy.volume.toString() }).toEqual({ side: 'buy', volume: '0.1' });
    await eventually('its SL and TP', () => svc.broker.positions(dSim.id)[0]?.takeProfit?.eq('1.12'));
    expect(svc.broker.positions(dSim.id)[0]!.stopLoss?.toString()).toBe('1.09');
    svc.broker.closePosition(master.brokerAccountId, opened.id);
    await eventually('the DXtrade copy closed', () => svc.broker.positions(dSim.id).length === 0);
  }, 60_000);

  it('a DXtrade Master -> a TradeLocker Slave: a trade made at the DXtrade broker is copied, and its close too', async () => {
    // Four connect calls for one user here (two per platform); the limit itself is tested in connect-platformd.
    svc.deps.connectLimit.max = 10;
    const group = (await svc.call('POST', '/app/v1/copier-groups', { token, body: { name: 'DX master group' } })).body;
    const logins = (await svc.call('GET', '/app/demo/broker-logins', { token })).body;
    const dx = logins.platformd[0];
    const dd = await svc.call('POST', '/api/connect/platformd/discover', {
      token,
      body: { environment: 'demo', server: dx.server, username: dx.username, domain: dx.domain, password: dx.password },
    });
    expect(dd.status).toBe(200);
    const dm = await svc.call('POST', '/api/connect/platformd/confirm', {
      token,
      body: { connectionId: dd.body.connectionId, account: dx.account, groupId: group.id, role: 'master' },
    });
    expect(dm.status).toBe(201);
    const b = logins.platformb[0];
    const bd = await svc.call('POST', '/api/connect/platformb/discover', {
      token,
      body: { environment: 'demo', server: b.server, email: b.email, password: b.password },
    });
    const pick = bd.body.accounts.find((a: { accountNumber: string }) => a.accountNumber === b.accountNumber);
    const bs = await svc.call('POST', '/api/connect/platformb/confirm', {
      token,
      body: {
        connectionId: bd.body.connectionId,
        accountId: pick.accountId,
        accountNumber: pick.accountNumber,
        groupId: group.id,
        role: 'slave',
      },
    });
    expect(bs.status).toBe(201);

    const dSim = simOfCode(dx.account);
    const bSim = svc.broker.accounts().find((a) => a.login === b.accountNumber)!;
    const opened = svc.broker.placeOrder(dSim.id, {
      symbol: 'EURUSD',
      side: 'sell',
      type: 'market',
      volume: new Decimal('0.2'),
      tag: 'dx-master-open',
    }).position!;
    const copy = await eventually('the TradeLocker copy', () => svc.broker.positions(bSim.id)[0]);
    expect({ side: copy.side, volume: copy.volume.toString() }).toEqual({ side: 'sell', volume: '0.2' });
    svc.broker.closePosition(dSim.id, opened.id);
    await eventually('the TradeLocker copy closed', () => svc.broker.positions(bSim.id).length === 0);
  }, 60_000);
});
