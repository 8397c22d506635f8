import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { startTestService, type TestService } from '../helpers/service.js';

// GET /v1/accounts answers from text kept per user (api/v1/account-list-cache.ts). Whatever changes an account
// must show in the very next answer, whole or paged: no waiting, no window of stale data.
describe('GET /v1/accounts shows every change of an account in the next answer', () => {
  let svc: TestService;
  let key: string;
  beforeAll(async () => {
    svc = await startTestService();
    key = svc.demo!.apiKey;
  });
  afterAll(async () => {
    await svc?.close();
  });

  const whole = async () => {
    const r = await svc.call('GET', '/v1/accounts', { token: key });
    expect(r.status).toBe(200);
    return r.body.accounts as Array<Record<string, any>>;
  };
  /** Every page of `limit`, followed through the Link header. */
  const paged = async (limit: number) => {
    const out: Array<Record<string, any>> = [];
    let path: string | null = `/v1/accounts?limit=${limit}`;
    while (path) {
      const r = await svc.call('GET', path, { token: key });
      expect(r.status).toBe(200);
      out.push(...r.body.accounts);
      path = /<([^>]+)>; rel="next"/.exec(r.headers.get('link') ?? '')?.[1] ?? null;
    }
    return out;
  };
  const both = async (id: string) => {
    const [a, b] = [(await whole()).find((x) => x.id === id), (await paged(1)).find((x) => x.id === id)];
    expect(b).toEqual(a);
    return a;
  };

  it('health (as a health round writes it), funds, status; an account created and one removed', async () => {
    const before = await whole();
    expect(before.length).toBeGreaterThan(1);
    expect(await paged(1)).toEqual(before);
    const target = before[0]!;

    const health = {
      state: 'down' as const,
      connected: false,
      tradingAllowed: false,
      inSync: false,
      dataStale: true,
      reconnectRequired: true,
      checkedAt: new Date().toISOString(),
      lastError: 'fresh-health-marker',
    };
    await svc.store.accounts.applyHealth([
      { id: target.id, health, funds: { balance: dec('123.45'), equity: dec('67.8') } },
    ]);
    const h = await both(target.id);
    expect(h!.health).toEqual(health);
    expect([h!.balance, h!.equity]).toEqual([123.45, 67.8]);

    await svc.store.accounts.setStatus(target.id, 'disconnected', 'fresh-status-marker');
    const s = await both(target.id);
    expect([s!.status, s!.statusReason]).toEqual(['disconnected', 'fresh-status-marker']);

    const me = await svc.call('GET', '/v1/me', { token: key });
    const made = await svc.store.accounts.create({
      userId: me.body.id,
      platform: 'sim',
      role: 'slave',
      name: 'Fresh account',
      brokerAccountId: 'fresh-b1',
      brokerAccountNumber: '9999',
    });
    expect((await both(made.id))?.name).toBe('Fresh account');

    await svc.store.accounts.remove(made.id);
    expect((await whole()).map((a) => a.id)).not.toContain(made.id);
    expect((await paged(1)).map((a) => a.id)).not.toContain(made.id);
  });

  it('a page of a list the process does not hold is read from the table, without the whole list', async () => {
    const me = await svc.call('GET', '/v1/me', { token: key });
    const byId = (a: Record<string, any>, b: Record<string, any>) => (a.id < b.id ? -1 : 1);
    // A new connection clears the process's lists (AccountsRepo.cache): the next page finds the user's list not held.
    const made = await svc.store.accounts.create({
      userId: me.body.id,
      platform: 'sim',
      role: 'slave',
      name: 'Clears the lists',
      brokerAccountId: 'cold-b1',
      brokerAccountNumber: '9998',
    });
    expect(svc.store.accounts.held(me.body.id)).toBeNull();
    // The whole list is read for the pages that follow, but no page waits for it: a page that asked for it fails.
    const list = vi.spyOn(svc.store.accounts, 'list').mockRejectedValue(new Error('a page read the whole list'));
    const fromTable = vi.spyOn(svc.store.accounts, 'listPage');
    let pages: Array<Record<string, any>>;
    try {
      pages = await paged(1);
      expect(fromTable).toHaveBeenCalled();
      expect(list).not.toHaveBeenCalled();
    } finally {
      list.mockRestore();
      fromTable.mockRestore();
    }
    const all = await whole();
    expect(all.map((a) => a.id)).toContain(made.id);
    // Pages read from the table, and (once the list is held) from the list: together the whole list in id order.
    expect(pages).toEqual([...all].sort(byId));
    expect(svc.store.accounts.held(me.body.id)?.map((a) => a.id)).toEqual(all.map((a) => a.id));
    await svc.store.accounts.remove(made.id);
  });
});
