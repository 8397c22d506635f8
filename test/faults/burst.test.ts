import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * 200 orders sent to the demo Master as fast as a client with 8 connections can: every Slave on every
 * platform shares its broker connection's rate limits between the copies, the health monitor's reads and the
 * settle loop's lookups. A healthy Slave loses no copy to that pressure: each copy ends confirmed, or refused
 * with a reason that is not our own doing (never "not eligible" because a busy broker was read as down, never
 * "too old" because a timed-out write waited for a slow settle schedule).
 */
const ORDERS = 200;
let svc: TestService;
let key: string;

beforeAll(async () => {
  // Health rounds every 500 ms during the burst, a broker timeout short enough to time writes out under pacing.
  svc = await startTestService({ env: { COPYTRADE_HEALTH_INTERVAL_MS: '500', COPYTRADE_BROKER_TIMEOUT_MS: '1500' } });
  key = svc.demo!.apiKey;
}, 120_000);
afterAll(async () => {
  await svc?.close();
});

describe('a burst of orders to one Master', () => {
  it(`${ORDERS} orders: every copy to a healthy Slave ends confirmed, none lost to pressure`, {
    timeout: 600_000,
  }, async () => {
    const accounts = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts as Array<{
      id: string;
      role: string;
      platform: string;
      groupId: string;
    }>;
    // The demo's first group: a simulator Master with Slaves on every platform.
    const master = accounts.find((a) => a.role === 'master' && a.platform === 'sim')!;
    const userId = (await svc.store.accounts.byId(master.id))!.userId;
    const slaves = accounts.filter((a) => a.role === 'slave' && a.groupId === master.groupId);
    expect(slaves.length).toBeGreaterThanOrEqual(4);

    const tradeIds: string[] = [];
    const t0 = Date.now();
    let next = 0;
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < ORDERS) {
          const i = next++;
          const r = await svc.call('POST', `/v1/accounts/${master.id}/orders`, {
            token: key,
            body: { symbol: 'EURUSD', side: i % 2 ? 'sell' : 'buy', volume: 0.02 },
          });
          statuses.push(r.status);
          if (r.status === 202) tradeIds.push(r.body.tradeId);
        }
      }),
    );
    const sentMs = Date.now() - t0;
    expect(statuses.filter((s) => s !== 202)).toEqual([]);

    // Every copy reaches a final state (the settle loop finishes what timed out).
    const final = new Set(['confirmed', 'rejected', 'skipped', 'denied']);
    await expect
      .poll(
        async () => {
          const rows = await Promise.all(tradeIds.map((t) => svc.store.trades.intentsOfTrade(t)));
          return rows.flat().filter((r) => !final.has(r.state)).length;
        },
        { timeout: 300_000, interval: 1000 },
      )
      .toBe(0);

    const rows = (await Promise.all(tradeIds.map((t) => svc.store.trades.intentsOfTrade(t)))).flat();
    const lost = rows.filter((r) => r.state !== 'confirmed');
    const why = lost.map(
      (r) =>
        `${slaves.find((s) => s.id === r.slaveAccountId)?.platform}:${r.state}:${(r.outcome as { code?: string } | null)?.code ?? r.skipReason ?? ''}`,
    );
    const tally = why.reduce<Record<string, number>>((m, w) => ({ ...m, [w]: (m[w] ?? 0) + 1 }), {});
    const changes = (await svc.store.events.after(userId, 0, 100_000)).filter(
      (e) => e.type === 'account.status_changed',
    );
    console.log(
      'status changes:',
      changes.map((e) => JSON.stringify(e.payload)),
    );
    console.log(
      `burst: ${ORDERS} orders sent in ${sentMs} ms, settled ${Date.now() - t0} ms after the first; not confirmed:`,
      tally,
    );
    // Refusals a Slave's own broker gives for its money are not losses; anything the service did to itself is.
    const ours = Object.keys(tally).filter((w) => !/:rejected:not_enough_money/.test(w));
    expect(ours).toEqual([]);
    expect(rows).toHaveLength(ORDERS * slaves.length);
  });
});
