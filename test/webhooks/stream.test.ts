import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

interface Msg {
  id: string;
  event: string;
  data: { id: string; type: string; accountId: string | null; sequence: number };
}

/** Reads server-sent events until `enough` says stop (or the time runs out), then drops the connection. */
async function readStream(
  url: string,
  headers: Record<string, string>,
  enough: (got: Msg[]) => boolean,
  ms = 15_000,
): Promise<{ status: number; contentType: string | null; msgs: Msg[] }> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), ms);
  const res = await fetch(url, { headers, signal: ac.signal });
  const msgs: Msg[] = [];
  if (res.status !== 200 || !res.body) {
    clearTimeout(timer);
    return { status: res.status, contentType: res.headers.get('content-type'), msgs };
  }
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  try {
    while (!enough(msgs)) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let at: number;
      while ((at = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, at);
        buf = buf.slice(at + 2);
        const f: Record<string, string> = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const i = line.indexOf(':');
          if (i > 0) f[line.slice(0, i)] = line.slice(i + 1).trimStart();
        }
        if (f.data) msgs.push({ id: f.id!, event: f.event!, data: JSON.parse(f.data) });
      }
    }
  } catch (err) {
    if (!ac.signal.aborted) throw err;
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  return { status: res.status, contentType: res.headers.get('content-type'), msgs };
}

describe('live event stream', () => {
  let svc: TestService;
  let key: string;
  let userId: string;
  let otherId: string;

  beforeAll(async () => {
    // A short heartbeat also wakes the reader to check its stop condition.
    svc = await startTestService({ env: { COPYTRADE_EVENTS_HEARTBEAT: '100ms' } });
    const u = await svc.deps.auth.createUser('stream@example.test', 'correct horse battery');
    userId = u.id;
    key = (await svc.deps.auth.createApiKey(u.id, 'stream')).apiKey;
    otherId = (await svc.deps.auth.createUser('stream-other@example.test', 'correct horse battery')).id;
  }, 60_000);
  let closed = false;
  afterAll(async () => {
    if (!closed) await svc?.close();
  });

  it('resumes from a cursor with no gap and no duplicate while events are being appended', async () => {
    const emit = (uid: string, acc: string, i: number) =>
      svc.store.events.emit([{ userId: uid, accountId: acc, type: 'position.modified', payload: { i } }]);
    for (let i = 0; i < 10; i++) await emit(userId, `acc_${i % 2}`, i);
    const listed = (await svc.call('GET', '/v1/events?limit=1000', { token: key })).body.events as Array<{
      cursor: string;
    }>;
    const from = listed[4]!.cursor;

    // A writer appends 60 more (and noise for another user) while the client reads, drops, and resumes.
    let finalCursor: string | null = null;
    const writer = (async () => {
      for (let i = 10; i < 70; i++) {
        await emit(userId, `acc_${i % 2}`, i);
        if (i % 3 === 0) await emit(otherId, 'acc_other', i);
        await new Promise((r) => setTimeout(r, 3));
      }
      const mine = (await svc.call('GET', '/v1/events?limit=1000', { token: key })).body.events;
      finalCursor = mine[mine.length - 1]!.cursor;
    })();

    const auth = { authorization: `Bearer ${key}`, accept: 'text/event-stream' };
    const first = await readStream(`${svc.baseUrl}/v1/events/stream?cursor=${from}`, auth, (m) => m.length >= 20);
    expect(first.status).toBe(200);
    expect(first.contentType).toMatch(/^text\/event-stream/);
    const lastId = first.msgs[first.msgs.length - 1]!.id;
    // Resume as EventSource does: Last-Event-ID wins over the cursor in the (old) URL.
    const second = await readStream(
      `${svc.baseUrl}/v1/events/stream?cursor=${from}`,
      { ...auth, 'last-event-id': lastId },
      // Cursors are opaque (equality only): the last event read is the last one written.
      (m) => finalCursor !== null && m.length > 0 && m[m.length - 1]!.id === finalCursor,
    );
    await writer;
    const all = [...first.msgs, ...second.msgs];
    const truth = (await svc.call('GET', `/v1/events?limit=1000&cursor=${from}`, { token: key })).body.events as Array<{
      cursor: string;
      id: string;
    }>;
    expect(truth).toHaveLength(65);
    expect(first.msgs.length).toBeLessThan(65);
    expect(all.map((m) => m.id)).toEqual(truth.map((e) => e.cursor));
    expect(all.map((m) => m.data.id)).toEqual(truth.map((e) => e.id));
    expect(all.every((m) => m.event === 'position.modified' && m.data.accountId !== 'acc_other')).toBe(true);
  });

  it('ends open streams when the service shuts down, instead of holding the shutdown', async () => {
    const res = await fetch(`${svc.baseUrl}/v1/events/stream`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    const t0 = Date.now();
    await svc.close();
    closed = true;
    expect(Date.now() - t0).toBeLessThan(5000);
    for (;;) if ((await reader.read()).done) break;
  });
});
