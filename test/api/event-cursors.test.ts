/**
 * Issue 46, finding 7: the events routes' cursor was the outbox position, one sequence over all users, so the
 * gap between two of a user's cursors counted everybody else's events. Cursors are now opaque and per user;
 * resuming from one still gives every later event once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
const users: Record<'a' | 'b', { id: string; key: string }> = { a: { id: '', key: '' }, b: { id: '', key: '' } };
const emit = (who: 'a' | 'b', i: number) =>
  svc.store.events.emit([
    { userId: users[who].id, accountId: `acc_${who}`, type: 'position.modified', payload: { i } },
  ]);
const list = async (who: 'a' | 'b', query = '') =>
  svc.call('GET', `/v1/events?limit=1000${query}`, { token: users[who].key });

/** The first message of a stream (or its first comment lines when none comes), then the connection is dropped. */
async function streamHead(who: 'a' | 'b', headers: Record<string, string> = {}, query = '') {
  const ac = new AbortController();
  const res = await fetch(`${svc.baseUrl}/v1/events/stream${query}`, {
    headers: { authorization: `Bearer ${users[who].key}`, ...headers },
    signal: ac.signal,
  });
  if (res.status !== 200) return { status: res.status, text: await res.text() };
  const reader = res.body!.getReader();
  let text = '';
  try {
    while (!/\ndata: /.test(text) && !(query === '' && !headers['last-event-id'] && text.includes('from cursor'))) {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
    }
  } finally {
    ac.abort();
  }
  return { status: 200, text };
}

beforeAll(async () => {
  svc = await startTestService();
  for (const who of ['a', 'b'] as const) {
    const u = await svc.deps.auth.createUser(`cursor-${who}@example.test`, 'correct horse battery');
    users[who] = { id: u.id, key: (await svc.deps.auth.createApiKey(u.id, who)).apiKey };
  }
  await emit('a', 0);
  for (let i = 0; i < 50; i++) await emit('b', i); // B is busy between A's two events
  await emit('a', 1);
  await emit('a', 2);
}, 60_000);
afterAll(async () => svc?.close());

describe('event cursors (issue 46)', () => {
  it("are opaque: no outbox position shows, so A cannot count B's events between two of its own", async () => {
    const positions = (await svc.store.events.after(users.a.id, 0, 1000)).map((e) => e.cursor);
    expect(positions[1]! - positions[0]!).toBe(51); // what the old cursors told A
    const r = await list('a');
    expect(r.status).toBe(200);
    const cursors = r.body.events.map((e: { cursor: unknown }) => e.cursor);
    expect(cursors).toHaveLength(3);
    for (const c of [...cursors, r.body.nextCursor]) expect(c).toMatch(/^[A-Za-z0-9_-]{22}$/);
    // No field of the answer carries a position (sequence is per account: 1, 2, 3).
    const numbers = new Set(
      [...r.text.matchAll(/"(?:cursor|nextCursor|position|offset)":\s*"?(\d+)/g)].map((m) => Number(m[1])),
    );
    for (const p of positions) expect(numbers.has(p)).toBe(false);
    expect(r.body.events.map((e: { sequence: number }) => e.sequence)).toEqual([1, 2, 3]);
    const head = await streamHead('a');
    expect(head.text).toMatch(/^retry: 2000\n: from cursor [A-Za-z0-9_-]{22}\n/);
  });

  it("one user's cursor is a 400 for another, on the list and on the stream", async () => {
    const bCursor = (await list('b', '&cursor=0')).body.events[10].cursor as string;
    const aCursor = (await list('a')).body.events[0].cursor as string;
    expect(bCursor).not.toBe(aCursor);
    const onList = await list('a', `&cursor=${bCursor}`);
    expect(onList.status).toBe(400);
    expect(onList.body.error).toMatch(/not a cursor of your events/);
    expect((await streamHead('a', { 'last-event-id': bCursor })).status).toBe(400);
    expect((await streamHead('a', {}, `?cursor=${bCursor}`)).status).toBe(400);
    // An old numeric cursor is refused the same way rather than read as a position.
    expect((await list('a', '&cursor=51')).status).toBe(400);
  });

  it('resume works: page by page with nextCursor, and the stream from Last-Event-ID', async () => {
    const all = (await list('a')).body.events.map((e: { id: string }) => e.id);
    const seen: string[] = [];
    let cursor = '0';
    for (let page = 0; page < 10; page++) {
      const r = await svc.call('GET', `/v1/events?limit=1&cursor=${cursor}`, { token: users.a.key });
      expect(r.status, r.text).toBe(200);
      seen.push(...r.body.events.map((e: { id: string }) => e.id));
      cursor = r.body.nextCursor;
      if (!r.body.hasMore) break;
    }
    expect(seen).toEqual(all);
    // After the last event the cursor stays put until a new one comes.
    expect((await list('a', `&cursor=${cursor}`)).body.events).toEqual([]);
    await emit('a', 3);
    expect((await list('a', `&cursor=${cursor}`)).body.events.map((e: { data: { i: number } }) => e.data.i)).toEqual([
      3,
    ]);

    const first = (await list('a')).body.events[0];
    const resumed = await streamHead('a', { 'last-event-id': first.cursor });
    expect(resumed.status).toBe(200);
    const msg = /id: ([^\n]+)\nevent: [^\n]+\ndata: ([^\n]+)/.exec(resumed.text)!;
    const second = (await list('a')).body.events[1];
    expect(msg[1]).toBe(second.cursor);
    expect(JSON.parse(msg[2]!).id).toBe(second.id);
  });
});
