import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

/** PUT /v1/accounts/{id}/copy-rule takes the risk_percent sizing and maxSlippage, and refuses rules that cannot work. */
let svc: TestService;
let key: string;
let slaveId: string;

beforeAll(async () => {
  svc = await startTestService();
  key = svc.demo!.apiKey;
  const accounts = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts;
  slaveId = accounts.find((a: any) => a.role === 'slave' && a.platform === 'sim').id;
});
afterAll(async () => svc?.close());

const put = (body: unknown) => svc.call('PUT', `/v1/accounts/${slaveId}/copy-rule`, { token: key, body });

describe('copy rule: risk_percent and maxSlippage', () => {
  it('saves them, and the group view shows them back', async () => {
    const r = await put({ sizing: { mode: 'risk_percent', riskPercent: '1.5' }, maxSlippage: '0.0005' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({
      sizing: { mode: 'risk_percent', riskPercent: 1.5 },
      maxSlippage: 0.0005,
      copyStopLoss: true,
    });
    const groups = (await svc.call('GET', '/v1/copier-groups', { token: key })).body.groups;
    const mine = groups.flatMap((g: any) => g.slaves).find((s: any) => s.id === slaveId);
    expect(mine.rule).toMatchObject({ sizing: { mode: 'risk_percent', riskPercent: 1.5 }, maxSlippage: 0.0005 });
  });

  it('a rule saved without the new fields reads back with maxSlippage null', async () => {
    const r = await put({ sizing: { mode: 'multiplier', multiplier: '1' } });
    expect(r.status).toBe(200);
    expect(r.body.maxSlippage).toBeNull();
  });

  it('refuses what cannot work, with the reasons', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ sizing: { mode: 'risk_percent', riskPercent: '150' } }, /riskPercent must be at most 100/],
      [{ sizing: { mode: 'risk_percent', riskPercent: '0' } }, /riskPercent must be greater than 0/],
      [{ sizing: { mode: 'risk_percent', riskPercent: '1' }, copyStopLoss: false }, /needs copyStopLoss on/],
      [{ maxSlippage: '0' }, /maxSlippage must be greater than 0/],
    ];
    for (const [body, reason] of cases) {
      const r = await put(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('invalid_request');
      expect(r.body.error).toMatch(reason);
    }
    for (const body of [
      { maxSlippage: '-1' },
      { maxSlippage: -0.5 },
      { maxSlippage: '1e-3' },
      { sizing: { mode: 'risk_percent' } },
      { sizing: { mode: 'risk_percent', riskPercent: '1', multiplier: '2' } },
    ]) {
      const r = await put(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('invalid_request');
    }
  });
});

describe('copy rule: side, magic number and comment filters', () => {
  it('saves them and reads them back; a rule without them reads back with the defaults', async () => {
    const body = {
      sides: 'buy',
      includeMagic: [1001, 2002],
      excludeMagic: [0],
      includeComments: ['Grid EA'],
      excludeComments: ['news'],
    };
    const r = await put(body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject(body);
    const plain = await put({});
    expect(plain.body).toMatchObject({
      sides: 'both',
      includeMagic: [],
      excludeMagic: [],
      includeComments: [],
      excludeComments: [],
    });
  });

  it('bad values get a 400 naming the field', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ sides: 'long' }, /sides/],
      [{ includeMagic: [-1] }, /includeMagic/],
      [{ includeMagic: [1.5] }, /includeMagic/],
      [{ excludeComments: [''] }, /excludeComments/],
      [{ includeMagic: [7], excludeMagic: [7] }, /magic number 7 is both in includeMagic and excludeMagic/],
    ];
    for (const [body, reason] of cases) {
      const r = await put(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('invalid_request');
      expect(JSON.stringify(r.body)).toMatch(reason);
    }
  });

  it("refuses a magic or comment filter when the group's Master platform does not carry it", async () => {
    const userId = (await svc.store.accounts.byId(slaveId))!.userId;
    const group = await svc.store.accounts.createGroup(userId, 'cTrader-led');
    const base = { userId, groupId: group.id, brokerAccountNumber: '1', balance: null, equity: null };
    await svc.store.accounts.create({
      ...base,
      platform: 'platformb',
      role: 'master',
      name: 'B master',
      brokerAccountId: `b-${Date.now()}`,
    });
    const slave = await svc.store.accounts.create({
      ...base,
      platform: 'sim',
      role: 'slave',
      name: 'S',
      brokerAccountId: `s-${Date.now()}`,
    });
    const putOn = (b: unknown) => svc.call('PUT', `/v1/accounts/${slave.id}/copy-rule`, { token: key, body: b });
    const magic = await putOn({ includeMagic: [1001] });
    expect(magic.status).toBe(400);
    expect(magic.body.error).toMatch(/includeMagic is set, but the Master's platform \w+ carries no magic number/);
    const comment = await putOn({ excludeComments: ['news'] });
    expect(comment.status).toBe(400);
    expect(comment.body.error).toMatch(
      /excludeComments is set, but the Master's platform \w+ carries no trade comment/,
    );
    // The side filter needs nothing of the Master's platform.
    expect((await putOn({ sides: 'sell' })).status).toBe(200);
  });
});

describe('copy rule: per-symbol overrides, symbol affixes, minTradeAmount', () => {
  it('saves them with their decimals exact and answers them as numbers', async () => {
    const r = await put({
      symbolOverrides: { XAUUSD: { multiplier: '0.5', maxVolume: 2 }, BTCUSD: { copy: false } },
      symbolSuffix: '.m',
      masterSymbolSuffix: '.a',
      minTradeAmount: '1000.5',
      maxSlippagePoints: 50,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({
      symbolOverrides: { XAUUSD: { multiplier: 0.5, maxVolume: 2 }, BTCUSD: { copy: false } },
      symbolSuffix: '.m',
      masterSymbolSuffix: '.a',
      symbolPrefix: '',
      minTradeAmount: 1000.5,
      maxSlippagePoints: 50,
    });
    const stored = (await svc.store.accounts.rulesFor([slaveId])).get(slaveId)!;
    expect(stored.symbolOverrides.XAUUSD).toEqual({ multiplier: '0.5', maxVolume: '2' });
    expect(stored.minTradeAmount).toBe('1000.5');
  });

  it('bad values get a 400 naming the field', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [
        { symbolOverrides: { XAUUSD: { multiplier: 1, volume: 1 } } },
        /symbolOverrides.XAUUSD takes a multiplier or a volume/,
      ],
      [
        { symbolOverrides: { XAUUSD: { volume: 0 } } },
        /symbolOverrides.XAUUSD.volume must be a decimal number greater than 0/,
      ],
      [{ symbolOverrides: { XAUUSD: { lots: 1 } } }, /symbolOverrides/],
      [{ symbolSuffix: '. m' }, /symbolSuffix/],
      [{ minTradeAmount: 0 }, /minTradeAmount must be greater than 0/],
      [{ maxSlippage: 0.0005, maxSlippagePoints: 50 }, /maxSlippage \(a price distance\) or maxSlippagePoints/],
      [{ symbolOverrides: { XAUUSD: { maxSlippagePoints: -1 } } }, /symbolOverrides/],
    ];
    for (const [body, reason] of cases) {
      const r = await put(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('invalid_request');
      expect(JSON.stringify(r.body)).toMatch(reason);
    }
  });
});
