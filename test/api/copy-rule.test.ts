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
