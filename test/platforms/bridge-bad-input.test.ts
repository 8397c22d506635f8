import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { PROTOCOL_VERSION } from '../../src/protocols/bridge/schemas.js';
import type { EventMsg } from '../../src/protocols/bridge/schemas.js';
import { BRIDGE_ACCOUNT, bridgeWorld } from '../helpers/bridge-world.js';
import { until } from '../helpers/cli-process.js';

type World = Awaited<ReturnType<typeof bridgeWorld>>;

interface Raw {
  got: Array<Record<string, unknown>>;
  send(m: unknown): void;
  sendText(t: string): void;
  closed: Promise<number>;
  status: Promise<number>;
  ws: WebSocket;
}

/** A hand-driven EA connection: what it sends is exactly what the test says. */
function raw(url: string, token: string): Raw {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  const got: Array<Record<string, unknown>> = [];
  ws.on('message', (d) => got.push(JSON.parse(String(d))));
  ws.on('error', () => {});
  const status = new Promise<number>((resolve) => {
    ws.on('open', () => resolve(101));
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
  });
  const opened = new Promise<void>((r) => ws.on('open', () => r()));
  return {
    got,
    ws,
    send: (m) => void opened.then(() => ws.send(JSON.stringify(m))),
    sendText: (t) => void opened.then(() => ws.send(t)),
    closed: new Promise((r) => ws.on('close', (code) => r(code))),
    status,
  };
}

const hello = (w: World, f: Record<string, unknown> = {}) => ({
  type: 'hello',
  protocol: PROTOCOL_VERSION,
  ea: 'test',
  terminal: 'mt5',
  build: 4755,
  login: w.acc.login,
  server: 'SimA-Bridge',
  company: 'Test',
  currency: 'USD',
  marginMode: 'hedging',
  tradeAllowed: true,
  lastSeq: 0,
  oldestSeq: 1,
  ...f,
});
const event = (seq: number, position = String(900_000 + seq)): EventMsg => ({
  type: 'event',
  seq,
  transaction: 'POSITION',
  order: null,
  deal: null,
  position,
  symbol: 'EURUSD',
  positionState: null,
  orderState: null,
  dealState: null,
  time: Date.now(),
});
const errorOf = (r: Raw, code: string) => r.got.find((m) => m['type'] === 'error' && m['code'] === code);

describe('terminal bridge: bad input gets a clear protocol error, and nothing is processed twice or lost', () => {
  let w: World;
  beforeAll(async () => {
    w = await bridgeWorld({ session: { floodBurst: 50, floodPerSec: 10 }, upgradesPerMinute: 1000 });
    // The test's own EA stands in for the simulated one: the account has one EA at a time.
    await w.ea.stop();
    await until('the simulated EA is gone', () => !w.link.connected, 5_000);
  }, 30_000);
  afterAll(() => w?.teardown());

  /** A raw session that said hello and was welcomed; its processed events are counted. */
  async function welcomed(f: Record<string, unknown> = {}) {
    const r = raw(w.url, w.token);
    r.send(hello(w, f));
    await expect.poll(() => r.got.some((m) => m['type'] === 'welcome')).toBe(true);
    return r;
  }

  for (const [what, text, code] of [
    ['malformed JSON', '{"type":"hello",', 'malformed_json'],
    ['an unknown message type', '{"type":"order","id":"x"}', 'unknown_type'],
    [
      'a message failing its schema',
      '{"type":"heartbeat","balance":1,"equity":"1","tradeAllowed":true,"time":1}',
      'schema_violation',
    ],
  ] as const) {
    it(`${what} closes the connection with ${code}`, async () => {
      const r = await welcomed();
      r.sendText(text);
      expect(await r.closed).toBe(4400);
      expect(errorOf(r, code)).toMatchObject({ fatal: true, message: expect.any(String) });
    });
  }

  it('anything before hello, a second hello, another protocol version or another login is refused and closed', async () => {
    const early = raw(w.url, w.token);
    early.send(event(1));
    expect(await early.closed).toBe(4400);
    expect(errorOf(early, 'hello_expected')).toBeDefined();
    const twice = await welcomed();
    twice.send(hello(w));
    await twice.closed;
    expect(errorOf(twice, 'hello_expected')).toBeDefined();
    const v2 = raw(w.url, w.token);
    v2.send(hello(w, { protocol: 2 }));
    await v2.closed;
    expect(errorOf(v2, 'protocol_unsupported')).toBeDefined();
    const other = raw(w.url, w.token);
    other.send(hello(w, { login: '123' }));
    await other.closed;
    expect(errorOf(other, 'login_mismatch')).toBeDefined();
  });

  it('a repeated sequence number is ignored with seq_repeated; a gap closes with seq_gap and the reconnect resumes there', async () => {
    const seen: number[] = [];
    const off = w.link.listen({ onEvent: (e) => seen.push(e.seq) });
    try {
      const start = w.link.processedSeq;
      const r = await welcomed({ lastSeq: start, oldestSeq: start + 1 });
      r.send(event(start + 1));
      r.send(event(start + 1));
      r.send(event(start + 2));
      await expect.poll(() => errorOf(r, 'seq_repeated')).toMatchObject({ fatal: false });
      await expect.poll(() => seen).toEqual([start + 1, start + 2]);
      r.send(event(start + 4));
      expect(await r.closed).toBe(4400);
      expect(errorOf(r, 'seq_gap')).toMatchObject({ fatal: true });
      // The EA still holds 3 and 4: it is told to resume after 2 and resends them; each is processed once.
      const again = await welcomed({ lastSeq: start + 4, oldestSeq: start + 3 });
      expect(again.got.find((m) => m['type'] === 'welcome')).toMatchObject({ resumeFrom: start + 2 });
      again.send(event(start + 3));
      again.send(event(start + 4));
      await expect.poll(() => seen).toEqual([start + 1, start + 2, start + 3, start + 4]);
      await expect
        .poll(() => again.got.filter((m) => m['type'] === 'received').at(-1))
        .toEqual({
          type: 'received',
          seq: start + 4,
        });
      again.ws.close();
      await again.closed;
    } finally {
      off();
    }
  });

  it('an ack for a command never sent is refused with unknown_command, and the connection goes on', async () => {
    const r = await welcomed({ lastSeq: w.link.processedSeq, oldestSeq: w.link.processedSeq + 1 });
    const ack = {
      type: 'ack',
      id: 'never-sent',
      retcode: 10009,
      message: 'done',
      order: '1',
      deal: '2',
      position: '3',
      volume: '0.1',
      price: '1.1',
      time: Date.now(),
      repeated: false,
      retryAfterSec: null,
    };
    r.send(ack);
    await expect.poll(() => errorOf(r, 'unknown_command')).toMatchObject({ fatal: false });
    r.send({ type: 'heartbeat', balance: '5', equity: '6', tradeAllowed: true, time: Date.now() });
    await expect.poll(() => w.link.heartbeat?.equity).toBe('6');
    r.ws.close();
    await r.closed;
  });

  it('a second EA for the same login is refused with duplicate_session; the first keeps the account', async () => {
    const first = await welcomed({ lastSeq: w.link.processedSeq, oldestSeq: w.link.processedSeq + 1 });
    const second = raw(w.url, w.token);
    second.send(hello(w, { lastSeq: w.link.processedSeq, oldestSeq: w.link.processedSeq + 1 }));
    expect(await second.closed).toBe(4400);
    expect(errorOf(second, 'duplicate_session')).toBeDefined();
    expect(w.link.connected).toBe(true);
    expect(first.ws.readyState).toBe(WebSocket.OPEN);
    first.ws.close();
    await first.closed;
  });

  it('a flood of events is closed with event_flood; what came before it was processed once', async () => {
    const seen: number[] = [];
    const off = w.link.listen({ onEvent: (e) => seen.push(e.seq) });
    try {
      const start = w.link.processedSeq;
      const r = await welcomed({ lastSeq: start, oldestSeq: start + 1 });
      for (let i = 1; i <= 500; i++) r.send(event(start + i));
      expect(await r.closed).toBe(4400);
      expect(errorOf(r, 'event_flood')).toMatchObject({ fatal: true });
      // The burst (50) went through, in order, each once; the rest is the EA's to resend after a reconnect.
      expect(seen.length).toBeGreaterThanOrEqual(50);
      expect(seen.length).toBeLessThan(500);
      expect(seen).toEqual(Array.from({ length: seen.length }, (_, i) => start + i + 1));
      expect(w.link.processedSeq).toBe(start + seen.length);
    } finally {
      off();
    }
  });

  it('a wrong, malformed or missing token is refused before the upgrade with 401', async () => {
    expect(await raw(w.url, 'ctbt_nope').status).toBe(401);
    expect(await raw(w.url, `${w.token.slice(0, -1)}${w.token.endsWith('x') ? 'y' : 'x'}`).status).toBe(401);
    expect(await raw(w.url, '').status).toBe(401);
    expect(w.link.connected).toBe(false);
  });

  it('a revoked token ends its live connection with token_revoked and opens nothing after', async () => {
    const r = await welcomed({ lastSeq: w.link.processedSeq, oldestSeq: w.link.processedSeq + 1 });
    expect(await w.tokens.revoke(BRIDGE_ACCOUNT, w.tokenId)).toBe(true);
    w.hub.revoke(w.tokenId);
    expect(await r.closed).toBe(4400);
    expect(errorOf(r, 'token_revoked')).toBeDefined();
    expect(await raw(w.url, w.token).status).toBe(401);
    // A foreign or unknown token id is unknown alike.
    expect(await w.tokens.revoke('acc_other', w.tokenId)).toBe(false);
  });
});

describe('terminal bridge: upgrades are rate limited per address', () => {
  it('past the limit a connection is refused with 429 and Retry-After, before its token is looked at', async () => {
    const w = await bridgeWorld({ upgradesPerMinute: 2 });
    try {
      // The simulated EA used one; this is the second; the third is over.
      const ok = raw(w.url, 'ctbt_wrong');
      expect(await ok.status).toBe(401);
      const over = raw(w.url, w.token);
      let retryAfter: string | undefined;
      over.ws.on('unexpected-response', (_req, res) => {
        retryAfter = res.headers['retry-after'];
      });
      expect(await over.status).toBe(429);
      expect(Number(retryAfter)).toBeGreaterThan(0);
    } finally {
      await w.teardown();
    }
  });
});
