import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let key: string;
let master: string;

beforeAll(async () => {
  svc = await startTestService();
  key = svc.demo!.apiKey;
  master = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts.find(
    (a: any) => a.role === 'master',
  ).id;
});
afterAll(async () => svc?.close());

const order = (body: unknown, raw?: string) =>
  svc.call('POST', `/v1/accounts/${master}/orders`, {
    token: key,
    ...(raw !== undefined ? { rawBody: raw } : { body }),
  });

describe('bad input never gives a 500: each gets a clear 4xx naming the problem', () => {
  const cases: Array<[string, unknown, number, RegExp]> = [
    ['missing fields', {}, 400, /symbol is required/],
    ['wrong type of volume', { symbol: 'EURUSD', side: 'buy', volume: '0.1' }, 400, /volume must be number/],
    ['unknown side', { symbol: 'EURUSD', side: 'up', volume: 0.1 }, 400, /side must be one of buy, sell/],
    ['volume zero', { symbol: 'EURUSD', side: 'buy', volume: 0 }, 400, /volume must be > 0/],
    ['negative volume', { symbol: 'EURUSD', side: 'buy', volume: -1 }, 400, /volume must be > 0/],
    ['volume off the step', { symbol: 'EURUSD', side: 'buy', volume: 0.015 }, 400, /multiple of 0.01/],
    [
      'stop loss off the tick grid',
      { symbol: 'EURUSD', side: 'buy', volume: 0.01, stopLoss: 1.0500001 },
      400,
      /stopLoss must be a multiple of the tick size/,
    ],
    [
      'over-long symbol',
      { symbol: 'X'.repeat(100), side: 'buy', volume: 0.1 },
      400,
      /symbol must NOT have more than 32 characters/,
    ],
    ['unknown symbol', { symbol: 'NOPE', side: 'buy', volume: 0.1 }, 400, /unknown symbol NOPE/],
    ['unknown field', { symbol: 'EURUSD', side: 'buy', volume: 0.1, leverage: 500 }, 400, /unknown field "leverage"/],
    ['body is an array', [1, 2], 400, /body/],
  ];
  for (const [name, body, status, msg] of cases) {
    it(name, async () => {
      const r = await order(body);
      expect(r.status).toBe(status);
      expect(r.body).toMatchObject({ code: 'invalid_request', requestId: r.headers.get('x-request-id') });
      expect(r.body.error).toMatch(msg);
    });
  }

  it('malformed JSON', async () => {
    const r = await order(undefined, '{"symbol": ');
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/not valid JSON/);
  });

  it('a body over the size limit gets 413', async () => {
    const r = await order(
      undefined,
      JSON.stringify({ symbol: 'EURUSD', side: 'buy', volume: 0.1, pad: 'x'.repeat(70_000) }),
    );
    expect(r.status).toBe(413);
    expect(r.body.code).toBe('payload_too_large');
  });

  it('a non-JSON content type gets 415', async () => {
    const r = await svc.call('POST', `/v1/accounts/${master}/orders`, {
      token: key,
      rawBody: 'symbol=EURUSD',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(r.status).toBe(415);
  });

  it('an unknown route is a 404 in the same body shape, and authentication is checked before the body', async () => {
    const r = await svc.call('GET', '/v1/nothing-here', { token: key });
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ code: 'not_found', requestId: expect.stringMatching(/^req_/) });
    const unauth = await svc.call('POST', `/v1/accounts/${master}/orders`, { rawBody: '{bad json' });
    expect(unauth.status).toBe(401);
  });

  it('no request made any 500', () => {
    expect(svc.logs.filter((l) => l.includes('"statusCode":500'))).toEqual([]);
  });
});

describe('request records (G2): every request is recorded and readable by its owner', () => {
  it("lists this caller's requests with status, and for writes the body digest and the response", async () => {
    const sent = await order({ symbol: 'EURUSD', side: 'buy', volume: 0.01 });
    expect(sent.status).toBe(202);
    // Request records are written in batches after the answer: read until this one is there.
    const recorded = async () =>
      ((await svc.call('GET', '/v1/requests?limit=100', { token: key })).body.requests as any[]).find(
        (x) => x.requestId === sent.headers.get('x-request-id'),
      );
    await expect.poll(recorded, { timeout: 15_000 }).toBeTruthy();
    const rec = await recorded();
    expect(rec).toMatchObject({
      method: 'POST',
      route: '/v1/accounts/:account_id/orders',
      status: 202,
      bodyDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
      response: { tradeId: sent.body.tradeId },
    });
    const trade = (await svc.call('GET', `/v1/trades/${sent.body.tradeId}`, { token: key })).body;
    expect(trade.requestId).toBe(rec.requestId);
  });

  it('a secret put in the path is not kept in the record (issue 46, finding 6)', async () => {
    const miss = await svc.call('GET', `/v1/accounts/${key}/positions`, { token: key });
    expect(miss.status).toBe(404);
    const recorded = async () =>
      ((await svc.call('GET', '/v1/requests?limit=100', { token: key })).body.requests as any[]).find(
        (x) => x.requestId === miss.headers.get('x-request-id'),
      );
    await expect.poll(recorded, { timeout: 15_000 }).toBeTruthy();
    const rec = await recorded();
    expect(rec.path).toBe('/v1/accounts/[redacted]/positions');
    expect(JSON.stringify(rec)).not.toContain(key);
  });
});
