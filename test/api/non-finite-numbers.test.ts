import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Issue 46, finding 1: JSON numbers beyond a double's range (`1e309`) parse to Infinity. Every numeric input must
 * refuse a non-finite or out-of-range value with 400 and the spec's error body, and a bad value already in the
 * store must never make a read fail.
 */
let svc: TestService;
let key: string;
let masterId: string;
let slaveId: string;
let groupId: string;

beforeAll(async () => {
  svc = await startTestService();
  key = svc.demo!.apiKey;
  const accounts = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts;
  const master = accounts.find((a: any) => a.role === 'master' && a.platform === 'sim');
  masterId = master.id;
  groupId = master.groupId;
  slaveId = accounts.find((a: any) => a.role === 'slave' && a.platform === 'sim' && a.groupId === groupId).id;
});
afterAll(async () => svc?.close());

const raw = (method: string, path: string, rawBody: string) => svc.call(method, path, { token: key, rawBody });

function expectRefused(r: { status: number; body: any }, what: string): void {
  expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(400);
  expect(r.body).toMatchObject({ code: 'invalid_request' });
  expect(typeof r.body.error).toBe('string');
  expect(typeof r.body.requestId).toBe('string');
}

describe('non-finite and out-of-range numbers', () => {
  it('risk limits: 1e309, -1e309 and too large values are a 400; the limits still read', async () => {
    for (const field of ['dailyLossLimit', 'maxOpenVolume', 'maxDrawdownPercent']) {
      for (const v of ['1e309', '-1e309', '1e300', `"${'9'.repeat(20)}"`]) {
        for (const path of [`/v1/accounts/${slaveId}/risk-limits`, `/v1/copier-groups/${groupId}/risk-limits`])
          expectRefused(await raw('PUT', path, `{"${field}": ${v}}`), `${path} ${field}=${v}`);
      }
    }
    expectRefused(await raw('PUT', `/v1/accounts/${slaveId}/risk-limits`, '{"dayResetHourUtc": 1e309}'), 'hour');
    const read = await svc.call('GET', `/v1/accounts/${slaveId}/risk-limits`, { token: key });
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    const readGroup = await svc.call('GET', `/v1/copier-groups/${groupId}/risk-limits`, { token: key });
    expect(readGroup.status, JSON.stringify(readGroup.body)).toBe(200);
  });

  it('copy rule, order, position and key inputs refuse 1e309', async () => {
    const cases: Array<[string, string, string]> = [
      ['PUT', `/v1/accounts/${slaveId}/copy-rule`, '{"sizing": {"mode": "multiplier", "multiplier": 1e309}}'],
      ['PUT', `/v1/accounts/${slaveId}/copy-rule`, '{"sizing": {"mode": "fixed", "volume": 1e309}}'],
      ['PUT', `/v1/accounts/${slaveId}/copy-rule`, '{"maxVolume": 1e309}'],
      ['PUT', `/v1/accounts/${slaveId}/copy-rule`, '{"maxSlippage": 1e309}'],
      ['PUT', `/v1/accounts/${slaveId}/copy-rule`, '{"maxDelayMs": 1e309}'],
      ['POST', `/v1/accounts/${masterId}/orders`, '{"symbol": "EURUSD", "side": "buy", "volume": 1e309}'],
      [
        'POST',
        `/v1/accounts/${masterId}/orders`,
        '{"symbol": "EURUSD", "side": "buy", "volume": 0.1, "stopLoss": 1e309}',
      ],
      [
        'POST',
        `/v1/accounts/${masterId}/orders`,
        '{"symbol": "EURUSD", "side": "buy", "volume": 0.1, "takeProfit": 1e300}',
      ],
      [
        'POST',
        `/v1/accounts/${masterId}/orders`,
        '{"symbol": "EURUSD", "side": "buy", "volume": 0.1, "type": "limit", "price": 1e309}',
      ],
      ['POST', `/v1/accounts/${masterId}/positions/any/close`, '{"volume": 1e309}'],
      ['PATCH', `/v1/accounts/${masterId}/positions/any`, '{"stopLoss": 1e309}'],
      ['POST', '/v1/webhook-endpoints/any/rotate-secret', '{"overlapSeconds": 1e309}'],
    ];
    for (const [method, path, body] of cases) expectRefused(await raw(method, path, body), `${method} ${path} ${body}`);
    const token = (
      await svc.call('POST', '/app/sign-in', { body: { email: svc.demo!.email, password: svc.demo!.password } })
    ).body.accessToken;
    const rotate = await svc.call('POST', '/app/api-keys/any/rotate', { token, rawBody: '{"overlapSeconds": 1e309}' });
    expectRefused(rotate, 'rotate overlapSeconds');
  });

  it('a non-finite value already in the store does not make a read fail', async () => {
    const owner = (await svc.deps.store.accounts.byId(slaveId))!.userId;
    // What the old code stored for `{"dailyLossLimit": 1e309}`: the decimal's text, "Infinity".
    await svc.deps.risk.setLimits(owner, 'account', slaveId, {
      maxDrawdownPercent: 'NaN',
      dailyLossLimit: 'Infinity',
      maxOpenVolume: '-Infinity',
      onBreach: null,
      dayResetHourUtc: null,
      requireStopLoss: null,
    } as never);
    const read = await svc.call('GET', `/v1/accounts/${slaveId}/risk-limits`, { token: key });
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    expect(read.body.limits).toMatchObject({ maxDrawdownPercent: null, dailyLossLimit: null, maxOpenVolume: null });
    const fixed = await svc.call('PUT', `/v1/accounts/${slaveId}/risk-limits`, { token: key, body: {} });
    expect(fixed.status, JSON.stringify(fixed.body)).toBe(200);
  });
});

/** Every number a request may carry, named by where it sits, with the bounds its schema gives. */
function numericInputs(doc: any): Array<{ where: string; schema: any }> {
  const out: Array<{ where: string; schema: any }> = [];
  const resolve = (s: any): any =>
    s?.$ref
      ? resolve(
          s.$ref
            .split('/')
            .slice(1)
            .reduce((o: any, k: string) => o[k], doc),
        )
      : s;
  const walk = (s0: any, where: string, seen: Set<any>) => {
    const s = resolve(s0);
    if (!s || typeof s !== 'object' || seen.has(s)) return;
    const next = new Set(seen).add(s);
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (types.includes('number') || types.includes('integer')) out.push({ where, schema: s });
    for (const k of ['anyOf', 'oneOf', 'allOf'])
      for (const [i, sub] of (s[k] ?? []).entries()) walk(sub, `${where}|${k}${i}`, next);
    for (const [name, sub] of Object.entries(s.properties ?? {})) walk(sub, `${where}.${name}`, next);
    if (s.items) walk(s.items, `${where}[]`, next);
    if (s.additionalProperties && typeof s.additionalProperties === 'object')
      walk(s.additionalProperties, `${where}{}`, next);
  };
  for (const [path, item] of Object.entries<any>(doc.paths))
    for (const [method, op] of Object.entries<any>(item)) {
      if (typeof op !== 'object' || !op) continue;
      for (const p of op.parameters ?? []) walk(p.schema, `${method} ${path} ${p.in}.${p.name}`, new Set());
      for (const media of Object.values<any>(op.requestBody?.content ?? {}))
        walk(media.schema, `${method} ${path} body`, new Set());
    }
  return out;
}

describe('every numeric input of the API', () => {
  it('has a lower and an upper bound in its schema', async () => {
    const doc = (await svc.call('GET', '/openapi.json')).body;
    const inputs = numericInputs(doc);
    expect(inputs.length).toBeGreaterThan(10);
    const unbounded = inputs
      .filter(({ schema: s }) => {
        const low = s.minimum !== undefined || s.exclusiveMinimum !== undefined;
        const high = s.maximum !== undefined || s.exclusiveMaximum !== undefined;
        return !(low && high);
      })
      .map((i) => i.where);
    expect(unbounded).toEqual([]);
  });
});
