import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let key: string;
let masterId: string;
let simSlave: { id: string; sim: string };
let masterSim: string;

beforeAll(async () => {
  svc = await startTestService();
  key = svc.demo!.apiKey;
  const accounts = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts;
  const master = accounts.find((a: any) => a.role === 'master' && a.platform === 'sim');
  masterId = master.id;
  const all = await Promise.all(accounts.map((a: any) => svc.deps.store.accounts.byId(a.id)));
  masterSim = all.find((a) => a!.id === masterId)!.brokerAccountId;
  const s = all.find((a) => a!.role === 'slave' && a!.platform === 'sim' && a!.groupId === master.groupId)!;
  simSlave = { id: s.id, sim: s.brokerAccountId };
});
afterAll(async () => svc?.close());

describe('reconcile routes and watcher trades through the API', () => {
  it('a trade made by hand at the Master broker is copied, and getTrade shows it with one row per Slave', async () => {
    const p = svc.broker.placeOrder(masterSim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec('0.1'),
      tag: 'byhand1',
    }).position!;
    let trade: any;
    await expect
      .poll(
        async () => {
          const list = (await svc.call('GET', `/v1/trades?accountId=${masterId}`, { token: key })).body.trades;
          trade = list.find((t: any) => t.master.positionId === p.id && t.source === 'watcher');
          return trade ? trade.copies.every((c: any) => c.outcome !== 'planned' && c.outcome !== 'sent') : false;
        },
        { timeout: 10_000 },
      )
      .toBe(true);
    const r = await svc.call('GET', `/v1/trades/${trade.tradeId}`, { token: key });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ source: 'watcher', action: 'open', master: { positionId: p.id } });
    for (const c of r.body.copies)
      expect(c).toMatchObject({ accountId: expect.any(String), outcome: expect.any(String) });
    expect(r.body.copies.find((c: any) => c.accountId === simSlave.id).outcome).toBe('confirmed');
  });

  it('dry run reports a copy closed by hand; the real run marks it user_closed and never reopens it', async () => {
    // Only this test's passes may judge the drift: the service's scheduled pass (1.5 s after start, then every
    // minute) ran late on a busy machine, marked the copy user_closed before the dry run, and the dry run found none.
    const reconciler = svc.deps.reconciler!;
    reconciler.start = () => undefined;
    await reconciler.stop();
    const copy = svc.broker.positions(simSlave.sim).find((x) => x.symbol === 'EURUSD')!;
    svc.broker.closePosition(simSlave.sim, copy.id);
    const dry = await svc.call('GET', `/v1/accounts/${masterId}/reconcile`, { token: key });
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ dryRun: true, healed: [] });
    expect(dry.body.drift).toContainEqual(
      expect.objectContaining({
        kind: 'user_closed',
        slaveAccountId: simSlave.id,
        slavePositionId: copy.id,
        action: 'mark_user_closed',
      }),
    );
    const run = await svc.call('POST', `/v1/accounts/${simSlave.id}/reconcile`, { token: key });
    expect(run.status).toBe(200);
    expect(run.body.healed).toContainEqual(
      expect.objectContaining({ kind: 'user_closed', slaveAccountId: simSlave.id }),
    );
    const again = await svc.call('POST', `/v1/accounts/${simSlave.id}/reconcile?dryRun=true`, { token: key });
    expect(again.body.drift).toEqual([]);
    expect(svc.broker.positions(simSlave.sim).some((x) => x.id === copy.id)).toBe(false);
  });

  it('the OpenAPI document marks reconcileDryRun as an open point; unknown accounts are 404', async () => {
    const doc = (await svc.call('GET', '/openapi.json')).body;
    expect(doc.paths['/v1/accounts/{account_id}/reconcile'].get).toMatchObject({
      operationId: 'reconcileDryRun',
      'x-open-point': true,
    });
    expect((await svc.call('GET', '/v1/accounts/acc_nope/reconcile', { token: key })).status).toBe(404);
  });
});
