import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../domain/errors.js';
import { SimBroker } from '../../simulator/broker.js';
import { type MetaApiSimOptions, startMetaApiSimServer } from '../../simulator/metaapi/server.js';
import { FailedCredentialMemo, provisionMtAccount, searchMtServers } from './connect.js';

const META = { server: 'SimMarkets-Live05', password: 'right-pw', platform: 'mt5', broker: 'Sim Markets Ltd' };
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
});

async function setup(opts: MetaApiSimOptions = {}) {
  const broker = new SimBroker({ seed: 2 });
  const acc = broker.createAccount({ balance: 2_500, currency: 'EUR', meta: META });
  broker.createAccount({
    balance: 100,
    meta: { server: 'Other-MT4', password: 'x', platform: 'mt4', broker: 'Other Broker' },
  });
  const sim = await startMetaApiSimServer(broker, { detectionMs: 30, deployMs: 20, connectMs: 20, ...opts });
  stops.push(() => sim.close());
  const ep = { baseUrl: sim.baseUrl, token: sim.token, hosts: sim.hosts, timeoutMs: 1_000 };
  return { broker, acc, sim, ep };
}

async function appError(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected an AppError');
}

describe('MetaTrader connection flow against the MetaApi simulator', () => {
  it('searches servers per platform version', async () => {
    const { ep } = await setup();
    expect(await searchMtServers({ ...ep, platform: 'mt5', query: 'simmarkets' })).toEqual([
      { broker: 'Sim Markets Ltd', servers: ['SimMarkets-Live05'] },
    ]);
    expect(await searchMtServers({ ...ep, platform: 'mt4', query: 'other' })).toEqual([
      { broker: 'Other Broker', servers: ['Other-MT4'] },
    ]);
    expect(await searchMtServers({ ...ep, platform: 'mt4', query: 'simmarkets' })).toEqual([]);
  });

  it('provisions with the right password: created through 202 polls, deployed, connected', async () => {
    const { ep, acc, sim } = await setup();
    const out = await provisionMtAccount({
      ...ep,
      server: META.server,
      login: acc.login,
      password: META.password,
      platform: 'mt5',
      waitMs: 3_000,
      pollMs: 10,
    });
    expect(out).toMatchObject({
      accountNumber: acc.login,
      platform: 'mt5',
      server: META.server,
      broker: 'Sim Markets Ltd',
      currency: 'EUR',
      hedging: true,
    });
    expect(sim.accounts()).toEqual([
      expect.objectContaining({ id: out.accountId, state: 'DEPLOYED', connectionStatus: 'CONNECTED' }),
    ]);
  });

  it('a wrong password is a clear broker_auth_failed, leaves nothing behind, and is not sent twice', async () => {
    const { ep, acc, sim } = await setup();
    const memo = new FailedCredentialMemo();
    const input = {
      ...ep,
      server: META.server,
      login: acc.login,
      password: 'wrong',
      platform: 'mt5' as const,
      waitMs: 3_000,
      pollMs: 10,
      failedCredentials: memo,
    };
    const err = await appError(provisionMtAccount(input));
    expect(err).toMatchObject({ code: 'broker_auth_failed', details: { reason: 'E_AUTH' } });
    expect(err.message).not.toContain('wrong');
    expect(sim.accounts()).toEqual([]);
    // The memo answers now, without another (possibly billed) attempt at MetaApi.
    const started = Date.now();
    expect((await appError(provisionMtAccount(input))).code).toBe('broker_auth_failed');
    expect(Date.now() - started).toBeLessThan(25);
  });

  it('a wrong password found only when the terminal connects: bounded wait, then undeployed and deleted', async () => {
    const { ep, acc, sim } = await setup({ credentialCheck: 'connect' });
    const err = await appError(
      provisionMtAccount({
        ...ep,
        server: META.server,
        login: acc.login,
        password: 'wrong',
        platform: 'mt5',
        waitMs: 400,
        pollMs: 20,
      }),
    );
    expect(err).toMatchObject({ code: 'broker_auth_failed' });
    expect(sim.accounts()).toEqual([]);
  });

  it('an unknown server is a clear invalid_request with suggestions, and nothing is created', async () => {
    const { ep, acc, sim } = await setup();
    const err = await appError(
      provisionMtAccount({
        ...ep,
        server: 'SimMarkets-Nope',
        login: acc.login,
        password: META.password,
        platform: 'mt5',
        waitMs: 3_000,
        pollMs: 10,
      }),
    );
    expect(err).toMatchObject({
      code: 'invalid_request',
      details: {
        reason: 'E_SRV_NOT_FOUND',
        field: 'server',
        suggestions: { 'Sim Markets Ltd': ['SimMarkets-Live05'] },
      },
    });
    expect(sim.accounts()).toEqual([]);
  });

  it('refuses bad input before calling MetaApi, and a bad token is broker_auth_failed', async () => {
    const { ep, acc } = await setup();
    expect(
      (await appError(provisionMtAccount({ ...ep, server: META.server, login: 'abc', password: 'p', platform: 'mt5' })))
        .code,
    ).toBe('invalid_request');
    expect((await appError(searchMtServers({ ...ep, token: 'nope', platform: 'mt5', query: '' }))).code).toBe(
      'broker_auth_failed',
    );
    expect(
      (
        await appError(
          provisionMtAccount({
            ...ep,
            token: 'nope',
            server: META.server,
            login: acc.login,
            password: META.password,
            platform: 'mt5',
          }),
        )
      ).code,
    ).toBe('broker_auth_failed');
  });

  it('gives up on a create that stays in detection past the bound, with a retryable error', async () => {
    const { ep, acc, sim } = await setup({ detectionMs: 5_000 });
    const err = await appError(
      provisionMtAccount({
        ...ep,
        server: META.server,
        login: acc.login,
        password: META.password,
        platform: 'mt5',
        waitMs: 200,
        pollMs: 10,
      }),
    );
    expect(err).toMatchObject({ code: 'upstream_unavailable', retryable: true });
    expect(sim.accounts()).toEqual([]);
  });
});
