import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/cli-process.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { ownPostgresAvailable, startOwnPostgres, type OwnPostgres } from '../helpers/own-postgres.js';

/**
 * What issue 43 saw: orders sent while PostgreSQL restarts. The test's own server (never the machine's) is
 * stopped (`pg_ctl stop -m fast`) under a stream of orders and reads until they have met it, then started: the
 * sessions are ended (57P01), the port refuses (ECONNREFUSED), the server starts up (57P03). Every answer is a success, a retryable 503
 * store_unavailable with Retry-After, or (an order whose Master write had left) 409 write_outcome_unknown; never a
 * 500. Afterwards everything answers again without a restart of the service.
 */
describe.runIf(ownPostgresAvailable())('serve while its PostgreSQL restarts', () => {
  let pg: OwnPostgres;
  let svc: TestService;

  beforeAll(async () => {
    pg = await startOwnPostgres();
    svc = await startTestService({ env: { DATABASE_URL: pg.url } });
  });
  afterAll(async () => {
    await svc?.close();
    await pg?.destroy();
  });

  it('answers 2xx, 503 or 409 during the restart, never 500', { timeout: 120_000 }, async () => {
    const apiKey = svc.demo!.apiKey;
    const accounts = await svc.call('GET', '/v1/accounts', { token: apiKey });
    const masterId = (accounts.body.accounts as Array<{ id: string; role: string }>).find(
      (a) => a.role === 'master',
    )!.id;
    const answers: Array<{ what: string; status: number; code?: string; retryAfter: string | null; at: number }> = [];
    let running = true;
    let restarted = 0;
    const note = (what: string, r: { status: number; body: any; headers: Headers }) =>
      answers.push({
        what,
        status: r.status,
        code: r.body?.code,
        retryAfter: r.headers.get('retry-after'),
        at: Date.now(),
      });
    const traffic = (async () => {
      while (running) {
        const [order, read] = await Promise.all([
          svc.call('POST', `/v1/accounts/${masterId}/orders`, {
            token: apiKey,
            body: { symbol: 'EURUSD', side: 'buy', volume: 0.01 },
          }),
          svc.call('GET', '/v1/accounts', { token: apiKey }),
        ]);
        note('order', order);
        note('read', read);
      }
    })();
    // The probe on its own loop: tied to the order's round trip it was asked once a round, and a restart of half a
    // second (CI: 511 ms) could fall between two of its answers.
    const probes = (async () => {
      while (running) note('readyz', await svc.call('GET', '/readyz'));
    })();
    await until('traffic flows before the restart', () => answers.filter((a) => a.status === 200).length >= 3, 30_000);
    const t0 = Date.now();
    // Stopped, and held down until the traffic has met it: a plain `pg_ctl restart` of 250 ms fell between two
    // requests on Node 24 in CI, and the pool's reconnect hid it. The store away is the case under test.
    await pg.stop();
    await until(
      'an order, a read and /readyz each meet the store away',
      () =>
        ['order', 'read', 'readyz'].every((what) =>
          answers.some((a) => a.what === what && a.status === 503 && a.at >= t0),
        ),
      30_000,
    );
    await pg.start();
    restarted = Date.now();
    await until(
      'reads answer 200 after the restart',
      () => answers.some((a) => a.what === 'read' && a.status === 200 && a.at > restarted),
      30_000,
    );
    await until(
      'an order is accepted after the restart',
      () => answers.some((a) => a.what === 'order' && a.status === 202 && a.at > restarted),
      30_000,
    );
    running = false;
    await Promise.all([traffic, probes]);

    const during = answers.filter((a) => a.at >= t0 && a.what !== 'readyz');
    const byStatus: Record<string, number> = {};
    for (const a of during)
      byStatus[`${a.what} ${a.status}${a.code ? ` ${a.code}` : ''}`] =
        (byStatus[`${a.what} ${a.status}${a.code ? ` ${a.code}` : ''}`] ?? 0) + 1;
    console.log(`PostgreSQL was away ${restarted - t0} ms; answers from its stop on: ${JSON.stringify(byStatus)}`);
    expect(answers.filter((a) => a.status === 500)).toEqual([]);
    for (const a of answers.filter((x) => x.what !== 'readyz' && x.status >= 300)) {
      if (a.status === 503) {
        expect(a.code).toBe('store_unavailable');
        expect(Number(a.retryAfter)).toBeGreaterThan(0);
      } else if (a.what === 'order') expect([409, 429]).toContain(a.status);
      else expect.fail(`${a.what} answered ${a.status} ${a.code}`);
    }
    // The restart was met: some request saw the store away, and /readyz said so.
    expect(during.some((a) => a.status === 503)).toBe(true);
    expect(answers.some((a) => a.what === 'readyz' && a.status === 503 && a.at >= t0)).toBe(true);
    expect(svc.logs.join('')).not.toContain('unhandled error');
  });
});
