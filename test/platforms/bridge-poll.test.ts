import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_HEADER } from '../../src/api/bridge/poll.js';
import { PROTOCOL_VERSION, type EventMsg } from '../../src/protocols/bridge/schemas.js';
import { BRIDGE_ACCOUNT, bridgeWorld } from '../helpers/bridge-world.js';
import { until } from '../helpers/cli-process.js';

type World = Awaited<ReturnType<typeof bridgeWorld>>;
type Msg = Record<string, unknown>;

interface PollAnswer {
  status: number;
  session: string | null;
  retryAfter: string | null;
  body: Msg[] | Msg;
  msgs: Msg[];
}

/** One hand-made poll: exactly the body, token and session the test says. */
async function poll(
  w: World,
  body: unknown[] | string,
  o: { session?: string | null; token?: string; wait?: number; signal?: AbortSignal; method?: string } = {},
): Promise<PollAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const token = o.token ?? w.token;
  if (token) headers.authorization = `Bearer ${token}`;
  if (o.session) headers[SESSION_HEADER] = o.session;
  const res = await fetch(`${w.url}?wait=${o.wait ?? 0}`, {
    method: o.method ?? 'POST',
    headers,
    ...(o.method === 'GET' ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    ...(o.signal ? { signal: o.signal } : {}),
  });
  const parsed = (await res.json()) as Msg[] | Msg;
  return {
    status: res.status,
    session: res.headers.get(SESSION_HEADER),
    retryAfter: res.headers.get('retry-after'),
    body: parsed,
    msgs: Array.isArray(parsed) ? parsed : [],
  };
}

const hello = (w: World, f: Msg = {}) => ({
  type: 'hello',
  protocol: PROTOCOL_VERSION,
  ea: 'test',
  terminal: 'mt4',
  build: 1420,
  login: w.acc.login,
  server: 'SimA-Bridge',
  company: 'Test',
  currency: 'USD',
  marginMode: 'hedging',
  tradeAllowed: true,
  lastSeq: w.link.processedSeq,
  oldestSeq: w.link.processedSeq + 1,
  ...f,
});
const event = (seq: number): EventMsg => ({
  type: 'event',
  seq,
  transaction: 'POSITION',
  order: null,
  deal: null,
  position: String(800_000 + seq),
  symbol: 'EURUSD',
  positionState: null,
  orderState: null,
  dealState: null,
  time: Date.now(),
});
const errorIn = (a: PollAnswer, code: string) => a.msgs.find((m) => m['type'] === 'error' && m['code'] === code);

describe('terminal bridge over MT4 long polls: the WebSocket protocol, one poll at a time', () => {
  let w: World;
  let beats = 0;
  /** Says hello as a new connection (after any earlier one of the test went stale) and returns its session. */
  async function welcomed(f: Msg = {}): Promise<{ session: string; first: PollAnswer }> {
    const first = await poll(w, [hello(w, f)]);
    expect(first.msgs[0]).toMatchObject({ type: 'welcome', protocol: PROTOCOL_VERSION });
    expect(first.session).toBeTruthy();
    return { session: first.session!, first };
  }
  /** A poll held open, carrying a heartbeat whose arrival shows the service has it (and holds it). */
  async function holding(session: string, wait: number, signal?: AbortSignal) {
    const time = Date.now() + ++beats;
    const beat = { type: 'heartbeat', balance: '5', equity: '6', tradeAllowed: true, time };
    const held = poll(w, [beat], { session, wait, ...(signal ? { signal } : {}) });
    await until('the poll is held', () => w.link.heartbeat?.time === time, 2_000);
    return { held };
  }
  /** Ends the test's connection the way an EA does not: it stops polling; the service forgets it when stale. */
  const forget = () => until('the connection is gone', () => !w.link.connected, 5_000);

  beforeAll(async () => {
    w = await bridgeWorld({
      transport: 'poll',
      endpoint: { poll: { staleMs: 50, idleMs: 400 }, pollsPerMinute: 100_000 },
    });
    // The test's own EA stands in for the simulated one: the account has one EA at a time.
    await w.ea.stop();
    await forget();
  }, 30_000);
  afterAll(() => w?.teardown());

  it('a hello poll gets the welcome and a Bridge-Session; an event in a later poll is confirmed in its answer', async () => {
    const start = w.link.processedSeq;
    const { session, first } = await welcomed();
    expect(first.msgs[0]).toMatchObject({ resumeFrom: start });
    expect(w.link.connected).toBe(true);
    const next = await poll(w, [event(start + 1)], { session });
    expect(next.status).toBe(200);
    expect(next.session).toBe(session);
    expect(next.msgs).toContainEqual({ type: 'received', seq: start + 1 });
    expect(w.link.processedSeq).toBe(start + 1);
    await forget();
  });

  it('a held poll is answered as soon as the service has a command, long before its wait', async () => {
    const { session } = await welcomed();
    const t0 = Date.now();
    const { held } = await holding(session, 20);
    const reply = w.link.request(
      {
        type: 'command',
        id: 'cmd-held-1',
        action: 'REMOVE',
        symbol: null,
        orderType: null,
        volume: null,
        price: null,
        sl: null,
        tp: null,
        position: null,
        order: '12345',
        comment: null,
      },
      5_000,
    );
    const answer = await held;
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(answer.msgs).toContainEqual(expect.objectContaining({ type: 'command', id: 'cmd-held-1' }));
    const ack = { type: 'ack', id: 'cmd-held-1', retcode: 10013, message: 'Invalid request', order: null };
    const rest = { deal: null, position: null, volume: null, price: null, time: Date.now() };
    await poll(w, [{ ...ack, ...rest, repeated: false, retryAfterSec: null }], { session });
    expect(await reply).toMatchObject({ type: 'ack', id: 'cmd-held-1', retcode: 10013 });
    await forget();
  });

  it('a reconnect resumes after the last processed event: resent events count once', async () => {
    const seen: number[] = [];
    const off = w.link.listen({ onEvent: (e) => seen.push(e.seq) });
    try {
      const start = w.link.processedSeq;
      const a = await welcomed();
      await poll(w, [event(start + 1), event(start + 2)], { session: a.session });
      await forget();
      // The EA never saw its `received` (the answer was lost): it still holds 1 and 2 and adds 3.
      const b = await welcomed({ lastSeq: start + 3, oldestSeq: start + 1 });
      expect(b.first.msgs[0]).toMatchObject({ type: 'welcome', resumeFrom: start + 2 });
      const again = await poll(w, [event(start + 2), event(start + 3)], { session: b.session });
      expect(errorIn(again, 'seq_repeated')).toMatchObject({ fatal: false });
      expect(again.msgs).toContainEqual({ type: 'received', seq: start + 3 });
      expect(seen).toEqual([start + 1, start + 2, start + 3]);
    } finally {
      off();
    }
    await forget();
  });

  it('malformed JSON, a body not an array or a message failing its schema ends the connection with its error', async () => {
    for (const [body, code] of [
      ['{not json', 'malformed_json'],
      ['{"type":"heartbeat"}', 'schema_violation'],
      [[{ type: 'heartbeat', balance: 1 }], 'schema_violation'],
      [[{ type: 'teleport' }], 'unknown_type'],
    ] as const) {
      const { session } = await welcomed();
      const bad = await poll(w, body as unknown[] | string, { session });
      expect(errorIn(bad, code), code).toMatchObject({ fatal: true });
      expect(bad.session).toBeNull();
      expect(w.link.connected).toBe(false);
      const after = await poll(w, [], { session });
      expect(errorIn(after, 'session_expired')).toMatchObject({ fatal: true });
    }
  });

  it('a first poll without hello, or a session of another connection, is refused', async () => {
    expect(errorIn(await poll(w, []), 'hello_expected')).toMatchObject({ fatal: true });
    expect(errorIn(await poll(w, [event(1)]), 'hello_expected')).toMatchObject({ fatal: true });
    expect(errorIn(await poll(w, [], { session: 'made-up' }), 'session_expired')).toBeDefined();
    expect(w.link.connected).toBe(false);
  });

  it('a second EA for the login while one holds a poll is refused with duplicate_session; the first goes on', async () => {
    const { session } = await welcomed();
    const { held } = await holding(session, 3);
    const second = await poll(w, [hello(w)]);
    expect(errorIn(second, 'duplicate_session')).toMatchObject({ fatal: true });
    expect((await held).status).toBe(200);
    const on = await poll(w, [{ type: 'heartbeat', balance: '5', equity: '7', tradeAllowed: true, time: 1 }], {
      session,
    });
    expect(on.session).toBe(session);
    expect(w.link.heartbeat?.equity).toBe('7');
    await forget();
  });

  it('a held poll whose client goes away is the connection lost: the account shows disconnected at once', async () => {
    const { session } = await welcomed();
    const ac = new AbortController();
    const held = (await holding(session, 20, ac.signal)).held.catch(() => null);
    ac.abort();
    await held;
    await until('the link is disconnected', () => !w.link.connected, 2_000);
    expect(errorIn(await poll(w, [], { session }), 'session_expired')).toBeDefined();
  });

  it('a wrong or missing token gets 401 on every poll, GET gets 405, and nothing is said about the account', async () => {
    const { session } = await welcomed();
    for (const token of ['ctbt_nope', `${w.token.slice(0, -1)}x`, '']) {
      const a = await poll(w, [], { token, session });
      expect(a.status).toBe(401);
      expect(a.body).toMatchObject({ code: 'bridge_token_invalid' });
    }
    expect((await poll(w, [], { method: 'GET' })).status).toBe(405);
    await forget();
  });

  it('a revoked token ends its held poll with token_revoked, and its next poll gets 401', async () => {
    const { session } = await welcomed();
    const { held } = await holding(session, 20);
    expect(await w.tokens.revoke(BRIDGE_ACCOUNT, w.tokenId)).toBe(true);
    w.hub.revoke(w.tokenId);
    const a = await held;
    expect(errorIn(a, 'token_revoked')).toMatchObject({ fatal: true });
    expect(w.link.connected).toBe(false);
    expect((await poll(w, [], { session })).status).toBe(401);
  });
});

describe('terminal bridge over MT4 long polls: rate limits', () => {
  it('refused polls from an address get 429 before their token is looked at; good polls do not count', async () => {
    const w = await bridgeWorld({ transport: 'poll', pollWaitSec: 0.05, endpoint: { refusedPollsPerMinute: 5 } });
    try {
      await w.ea.stop();
      // Many EAs may share an address (a proxy): polls with a good token do not use up the address's allowance.
      for (let i = 0; i < 10; i++) expect((await poll(w, [])).status).toBe(200);
      let over: PollAnswer | null = null;
      let refused = 0;
      for (let i = 0; i < 10 && !over; i++) {
        const a = await poll(w, [], { token: 'ctbt_wrong' });
        if (a.status === 429) over = a;
        else expect(a.status, `refused poll ${++refused}`).toBe(401);
      }
      expect(refused).toBe(5);
      expect(over?.body).toMatchObject({ code: 'rate_limited', error: 'too many bridge requests from this address' });
      expect(Number(over?.retryAfter)).toBeGreaterThan(0);
    } finally {
      await w.teardown();
    }
  });

  it('past pollsPerMinute one token gets 429 with Retry-After', async () => {
    const w = await bridgeWorld({ transport: 'poll', pollWaitSec: 0.05, endpoint: { pollsPerMinute: 40 } });
    try {
      await w.ea.stop();
      let over: PollAnswer | null = null;
      for (let i = 0; i < 60 && !over; i++) {
        const a = await poll(w, []);
        if (a.status === 429) over = a;
      }
      expect(over?.body).toMatchObject({ code: 'rate_limited', error: 'too many polls with this bridge token' });
      expect(Number(over?.retryAfter)).toBeGreaterThan(0);
    } finally {
      await w.teardown();
    }
  });
});
