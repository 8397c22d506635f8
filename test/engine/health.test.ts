import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { HealthMonitor } from '../../src/engine/health/monitor.js';

let svc: TestService;
let monitor: HealthMonitor;

/**
 * No test here is about a slow broker: every fault answers at once (reset, 401). So the broker timeout and the
 * check's own time budget are far above what a busy machine needs, and an outcome can only come from the fault,
 * never from a round that happened to take longer than a few hundred milliseconds.
 */
const GENEROUS_MS = 30_000;

beforeAll(async () => {
  svc = await startTestService({
    env: { COPYTRADE_HEALTH_INTERVAL_MS: '0', COPYTRADE_BROKER_TIMEOUT_MS: String(GENEROUS_MS) },
  });
  monitor = new HealthMonitor(svc.store, svc.deps.adapters, {
    intervalMs: 60_000,
    staleAfterMs: 0,
    checkTimeoutMs: GENEROUS_MS,
    // Not about our own stalls either (test/engine/health-pressure.test.ts is): on a starved machine a failed
    // read would otherwise be put down to our stall and never acted on at once.
    loopStalledMs: () => 0,
  });
  // Opening the in-memory store alone takes well over 15 s when the two cores are shared by several runs.
}, 180_000);
afterAll(async () => svc?.close());

const slave = async (platform: string) =>
  (await svc.store.accounts.all()).find((a) => a.platform === platform && a.role === 'slave')!;
const simIdOf = async (accountId: string) => {
  const a = (await svc.store.accounts.byId(accountId))!;
  return (svc.broker.account(a.brokerAccountId) ?? svc.broker.accounts().find((s) => s.login === a.brokerAccountId))!
    .id;
};

describe('health per account (connected, trading allowed, data stale, reconnect required)', () => {
  it('a broker that stops answering marks the account disconnected and stale, then connected again when it answers', async () => {
    const acc = await slave('sim');
    svc.broker.faults.inject({ op: 'read', kind: 'reset', accountId: await simIdOf(acc.id) });
    const down = await monitor.check(acc);
    expect(down).toMatchObject({ state: 'down', connected: false, tradingAllowed: false, dataStale: true });
    expect((await svc.store.accounts.byId(acc.id))!.status).toBe('disconnected');
    // A disconnected Slave is not copied to.
    const up = await monitor.check((await svc.store.accounts.byId(acc.id))!);
    expect(up).toMatchObject({ state: 'ok', connected: true, dataStale: false });
    const after = (await svc.store.accounts.byId(acc.id))!;
    expect(after.status).toBe('connected');
    const events = (await svc.store.events.after(after.userId, 0, 1000))
      .filter((e) => e.accountId === acc.id)
      .map((e) => e.type);
    expect(events).toEqual([
      'account.health_changed',
      'account.status_changed',
      'account.health_changed',
      'account.status_changed',
    ]);
  });

  it('an invalidated OAuth token makes a platform C account reconnect_required, visible on both families', async () => {
    const acc = await slave('platformc');
    svc.broker.faults.inject({ op: 'read', kind: 'token_invalidated', accountId: await simIdOf(acc.id), times: 5 });
    const h = await monitor.check(acc);
    expect(h).toMatchObject({ reconnectRequired: true, tradingAllowed: false });
    const v = (await svc.call('GET', '/v1/accounts', { token: svc.demo!.apiKey })).body.accounts.find(
      (a: any) => a.id === acc.id,
    );
    expect(v).toMatchObject({ status: 'reconnect_required', health: { reconnectRequired: true } });
    const r = (await svc.call('GET', '/api/platformc/accounts', { token: svc.demo!.accessToken })).body.data.find(
      (a: any) => a.id === acc.id,
    );
    expect(r.health.reconnectRequired).toBe(true);
    svc.broker.faults.clear();
  });

  it('keeps balance and equity fresh from the broker', async () => {
    const acc = await slave('platformb');
    const sim = svc.broker.account(await simIdOf(acc.id))!;
    await monitor.check(acc);
    expect((await svc.store.accounts.byId(acc.id))!.balance?.toString()).toBe(
      svc.broker.state(sim.id).balance.toString(),
    );
  });
});
