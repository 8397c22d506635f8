import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Issue 13: list routes had no paging (the webhook list came back as 815 KB in one answer; order history had
 * no limit). Every list pages with limit + opaque cursor; each walk below must give every item exactly once,
 * in the order of the whole list.
 */
let svc: TestService;
let key: string;
let token: string;
let masterId: string;
let slaveId: string;

beforeAll(async () => {
  svc = await startTestService({
    env: { COPYTRADE_QUOTA_COPIER_GROUPS: '0', COPYTRADE_WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' },
  });
  key = svc.demo!.apiKey;
  token = svc.demo!.accessToken;
  const { body } = await svc.call('GET', '/v1/accounts', { token: key });
  const master = body.accounts.find((a: any) => a.role === 'master' && a.platform === 'sim');
  masterId = master.id;
  slaveId = body.accounts.find(
    (a: any) => a.role === 'slave' && a.groupId === master.groupId && a.platform === 'sim',
  ).id;
  for (let i = 0; i < 5; i++) {
    const r = await svc.call('POST', `/v1/accounts/${masterId}/orders`, {
      token: key,
      body: { symbol: 'EURUSD', side: i % 2 ? 'sell' : 'buy', volume: 0.1 },
    });
    expect(r.status).toBe(202);
  }
  for (let i = 0; i < 3; i++)
    expect(
      (await svc.call('POST', '/v1/webhook-endpoints', { token: key, body: { url: `http://127.0.0.1:9/p${i}` } }))
        .status,
    ).toBe(201);
  for (let i = 0; i < 2; i++)
    expect((await svc.call('POST', '/app/api-keys', { token, body: { name: `p${i}` } })).status).toBe(201);
});
afterAll(async () => svc?.close());

/** Follows nextCursor (or the Link header) from the first page; returns the ids seen, page by page. */
async function walk(
  path: string,
  field: string,
  opts: { cred?: string; idOf?: (x: any) => string; data?: (b: any) => any[]; viaLink?: boolean } = {},
): Promise<{ ids: string[]; pages: number }> {
  const cred = opts.cred ?? key;
  const idOf = opts.idOf ?? ((x: any) => x.id);
  const ids: string[] = [];
  let next: string | null = path;
  let pages = 0;
  while (next) {
    const r = await svc.call('GET', next, { token: cred });
    expect(r.status, `${next}: ${r.text}`).toBe(200);
    const items = opts.data ? opts.data(r.body) : r.body[field];
    ids.push(...items.map(idOf));
    pages++;
    const link = r.headers.get('link');
    if (opts.viaLink) next = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1]! : null;
    else {
      expect(link !== null).toBe(r.body.nextCursor !== null);
      next = r.body.nextCursor
        ? `${path}${path.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(r.body.nextCursor)}`
        : null;
    }
    expect(pages).toBeLessThan(100);
  }
  return { ids, pages };
}

describe('paging of every list route (issue 13)', () => {
  it('trades, the ledger, request records and order history: every item once, in order, across pages', async () => {
    const all = (await svc.call('GET', `/v1/trades?accountId=${masterId}&limit=200`, { token: key })).body.trades.map(
      (t: any) => t.tradeId,
    );
    expect(all.length).toBeGreaterThanOrEqual(5);
    const trades = await walk(`/v1/trades?accountId=${masterId}&limit=2`, 'trades', { idOf: (t) => t.tradeId });
    expect(trades.ids).toEqual(all);
    expect(trades.pages).toBe(Math.ceil(all.length / 2));

    const ledgerAll = (
      await svc.call('GET', `/v1/accounts/${slaveId}/ledger?limit=200`, { token: key })
    ).body.entries.map((e: any) => e.intentId);
    expect(ledgerAll.length).toBeGreaterThanOrEqual(5);
    expect((await walk(`/v1/accounts/${slaveId}/ledger?limit=2`, 'entries', { idOf: (e) => e.intentId })).ids).toEqual(
      ledgerAll,
    );

    // Many request records land within the same millisecond: the cursor must not skip or repeat any of them.
    await Promise.all(Array.from({ length: 30 }, () => svc.call('GET', '/v1/me', { token: key })));
    await svc.deps.store.requests.flush();
    const reqAll = (await svc.call('GET', '/v1/requests?limit=200', { token: key })).body.requests.map(
      (x: any) => x.requestId,
    );
    const reqs = await walk('/v1/requests?limit=7', 'requests', { idOf: (x) => x.requestId });
    // The walk itself adds records newer than its first page: the old ones are a contiguous run of what it saw.
    const start = reqs.ids.indexOf(reqAll[0]);
    expect(start).toBeGreaterThanOrEqual(0);
    expect(reqs.ids.slice(start, start + reqAll.length)).toEqual(reqAll);
    expect(new Set(reqs.ids).size).toBe(reqs.ids.length);

    const history = `/v1/accounts/${masterId}/orders?history=true`;
    const ordersAll = (await svc.call('GET', `${history}&limit=500`, { token: key })).body.orders.map((o: any) => o.id);
    expect(ordersAll.length).toBeGreaterThanOrEqual(5);
    expect((await walk(`${history}&limit=2`, 'orders')).ids).toEqual(ordersAll);
    // Without a limit, history is a page of the default size, not the whole history.
    const first = await svc.call('GET', history, { token: key });
    expect(first.body.orders.length).toBeLessThanOrEqual(100);
  });

  it('copier groups: a default page of 50, then the rest; webhooks and API keys page too', async () => {
    await svc.deps.auth.createUser('pager@example.test', 'password-123');
    const user = (await svc.deps.store.users.byEmail('pager@example.test'))!;
    const { apiKey } = await svc.deps.auth.createApiKey(user.id, 'k');
    for (let i = 0; i < 55; i++) await svc.deps.store.accounts.createGroup(user.id, `g${i}`);
    const first = await svc.call('GET', '/v1/copier-groups', { token: apiKey });
    expect(first.body.groups).toHaveLength(50);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    expect(first.headers.get('link')).toMatch(/^<\/v1\/copier-groups\?cursor=[^>]+&limit=50>; rel="next"$/);
    const groups = await walk('/v1/copier-groups', 'groups', { cred: apiKey });
    expect(groups.pages).toBe(2);
    expect(groups.ids).toHaveLength(55);
    expect(groups.ids).toEqual([...groups.ids].sort());
    expect((await walk('/v1/copier-groups?limit=7', 'groups', { cred: apiKey, viaLink: true })).ids).toEqual(
      groups.ids,
    );

    const hooks = (await svc.call('GET', '/v1/webhook-endpoints?limit=200', { token: key })).body.endpoints.map(
      (e: any) => e.id,
    );
    expect(hooks).toHaveLength(3);
    expect((await walk('/v1/webhook-endpoints?limit=1', 'endpoints')).ids).toEqual(hooks);
    const keys = (await svc.call('GET', '/app/api-keys?limit=200', { token })).body.keys.map((k: any) => k.id);
    expect(keys.length).toBeGreaterThanOrEqual(3);
    expect((await walk('/app/api-keys?limit=1', 'keys', { cred: token })).ids).toEqual(keys);
    // The dashboard's mirror pages the same way, with a Link back onto the mirror.
    const mirror = await svc.call('GET', '/app/v1/webhook-endpoints?limit=1', { token });
    expect(mirror.headers.get('link')).toMatch(/^<\/app\/v1\/webhook-endpoints\?/);
  });

  it('routes whose envelope the spec fixes keep it to the letter: the whole list without limit, Link rel="next" with one', async () => {
    const whole = await svc.call('GET', '/v1/accounts?_=1', { token: key }); // an unknown parameter is ignored, as before
    expect(Object.keys(whole.body)).toEqual(['accounts']);
    expect(whole.headers.get('link')).toBeNull();
    const ids = whole.body.accounts.map((a: any) => a.id);
    expect(ids.length).toBeGreaterThan(3);
    const paged = await svc.call('GET', '/v1/accounts?limit=2', { token: key });
    expect(Object.keys(paged.body)).toEqual(['accounts']);
    expect(paged.body.accounts).toHaveLength(2);
    expect((await walk('/v1/accounts?limit=2', 'accounts', { viaLink: true })).ids).toEqual([...ids].sort());

    const r = await svc.call('GET', '/api/trading-accounts', { token });
    expect(Object.keys(r.body)).toEqual(['success', 'data']);
    const rIds = r.body.data.map((a: any) => a.id);
    expect(
      (await walk('/api/trading-accounts?limit=1', '', { cred: token, viaLink: true, data: (b) => b.data })).ids,
    ).toEqual([...rIds].sort());
  });

  it('positions page on every family (issue 46): every open position once, oldest first, across pages', async () => {
    const settled = async (path: string, data: (b: any) => any[], cred: string) =>
      vi.waitFor(
        async () => {
          const r = await svc.call('GET', `${path}?limit=500`, { token: cred });
          expect(r.status, r.text).toBe(200);
          expect(data(r.body).length).toBeGreaterThanOrEqual(3);
          return data(r.body).map((p: any) => p.id);
        },
        { timeout: 15_000, interval: 50 },
      );
    const v1 = `/v1/accounts/${masterId}/positions`;
    const all = await settled(v1, (b) => b.positions, key);
    const paged = await walk(`${v1}?limit=2`, 'positions');
    expect(paged.ids).toEqual(all);
    expect(paged.pages).toBe(Math.ceil(all.length / 2));
    const opened = (await svc.call('GET', `${v1}?limit=500`, { token: key })).body.positions.map(
      (p: any) => p.openedAt,
    );
    expect(opened).toEqual([...opened].sort());
    expect((await svc.call('GET', `${v1}?limit=501`, { token: key })).status).toBe(400);

    // Family R: the copies on the demo group's platform B Slave, paged in the same {success, data} envelope.
    const accounts = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts;
    const b = accounts.find(
      (a: any) => a.platform === 'platformb' && a.groupId === accounts.find((m: any) => m.id === masterId).groupId,
    );
    const r = `/api/trading-accounts/${b.id}/positions`;
    const rAll = await settled(r, (x) => x.data, token);
    expect((await walk(`${r}?limit=1`, '', { cred: token, data: (x) => x.data })).ids).toEqual(rAll);
    const first = await svc.call('GET', `${r}?limit=1`, { token });
    expect(Object.keys(first.body)).toEqual(['success', 'data', 'nextCursor']);
    expect(first.headers.get('link')).toMatch(/rel="next"$/);
  });

  it("a limit above the maximum and a cursor that is not this list's are clear 400s", async () => {
    const over = await svc.call('GET', '/v1/copier-groups?limit=201', { token: key });
    expect(over.status).toBe(400);
    expect(over.body.error).toBe('limit 201 is above the maximum of 200 for this list; page on with cursor');
    expect(
      (await svc.call('GET', `/v1/accounts/${masterId}/orders?history=true&limit=501`, { token: key })).status,
    ).toBe(400);
    expect((await svc.call('GET', '/v1/accounts?limit=0', { token: key })).status).toBe(400);
    expect((await svc.call('GET', '/v1/events?limit=1001', { token: key })).status).toBe(400);
    const bad = await svc.call('GET', '/v1/trades?cursor=not-a-cursor', { token: key });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/cursor is not a cursor of this list/);
    const groupsCursor = (await svc.call('GET', '/v1/webhook-endpoints?limit=1', { token: key })).body.nextCursor;
    expect((await svc.call('GET', `/v1/copier-groups?cursor=${groupsCursor}`, { token: key })).status).toBe(400);
  });
});
