import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../domain/errors.js';
import { SimBroker } from '../../simulator/broker.js';
import { startCTraderSimServer, type CTraderSimServer } from '../../simulator/ctrader/server.js';
import {
  buildAuthorizationUrl,
  exchangeCode,
  listAccountsForToken,
  refreshTokens,
  verifyCTraderAccount,
} from './oauth.js';

describe('cTrader OAuth connect flow against the simulator', () => {
  let broker: SimBroker;
  let server: CTraderSimServer;
  const redirectUri = 'http://127.0.0.1:9/callback';

  beforeAll(async () => {
    broker = new SimBroker({ seed: 1 });
    broker.createAccount({ balance: 1_000, login: '7001', meta: { ctidUserId: 'alice', environment: 'demo' } });
    broker.createAccount({
      balance: 2_000,
      login: '7002',
      meta: { ctidUserId: 'alice', environment: 'live', brokerName: 'Sim Live' },
    });
    broker.createAccount({ balance: 3_000, login: '8001', meta: { ctidUserId: 'bob', environment: 'demo' } });
    server = await startCTraderSimServer(broker);
  });
  afterAll(async () => server?.close());

  const base = () => ({
    oauthBaseUrl: server.oauthBaseUrl,
    clientId: server.clientId,
    clientSecret: server.clientSecret,
  });
  const endpoint = () => ({ ...server.endpoints.demo, ca: server.ca });

  async function authorize(user: string | null, state = 'st-123'): Promise<URL> {
    const url = new URL(buildAuthorizationUrl({ ...base(), redirectUri, state }));
    if (user) url.searchParams.set('user', user);
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location')!);
  }

  it('authorization redirect -> code -> tokens -> account list -> verify', async () => {
    const consent = await fetch(buildAuthorizationUrl({ ...base(), redirectUri, state: 's' }));
    expect(consent.status).toBe(200);
    expect(await consent.text()).toContain('alice');

    const back = await authorize('alice');
    expect(`${back.origin}${back.pathname}`).toBe(redirectUri);
    expect(back.searchParams.get('state')).toBe('st-123');
    const code = back.searchParams.get('code')!;
    expect(code).toBeTruthy();

    const tokens = await exchangeCode({ ...base(), code, redirectUri });
    expect(tokens).toMatchObject({ tokenType: 'bearer', expiresIn: 2_628_000 });
    await expect(exchangeCode({ ...base(), code, redirectUri })).rejects.toMatchObject({ code: 'invalid_request' });

    const list = await listAccountsForToken({
      endpoint: endpoint(),
      clientId: server.clientId,
      clientSecret: server.clientSecret,
      accessToken: tokens.accessToken,
    });
    expect(list.canTrade).toBe(true);
    expect(list.accounts.map((a) => [a.traderLogin, a.environment]).sort()).toEqual([
      ['7001', 'demo'],
      ['7002', 'live'],
    ]);

    const live = verifyCTraderAccount(list.accounts, { accountNumber: '7002', environment: 'live' });
    expect(live).toMatchObject({ isLive: true, brokerName: 'Sim Live' });
    expect(live.ctidTraderAccountId).toBe(
      server.ctidTraderAccountIdOf(broker.accounts().find((a) => a.login === '7002')!.id),
    );
    expect(() => verifyCTraderAccount(list.accounts, { accountNumber: '7002', environment: 'demo' })).toThrow(
      /live account, not demo/,
    );
    expect(() => verifyCTraderAccount(list.accounts, { accountNumber: '8001' })).toThrow(AppError);
    expect(() => verifyCTraderAccount(list.accounts, {})).toThrow(/required/);

    // Refresh is single-use: the old refresh token is dead afterwards.
    const fresh = await refreshTokens({ ...base(), refreshToken: tokens.refreshToken });
    expect(fresh.accessToken).not.toBe(tokens.accessToken);
    await expect(refreshTokens({ ...base(), refreshToken: tokens.refreshToken })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(
      listAccountsForToken({
        endpoint: endpoint(),
        clientId: server.clientId,
        clientSecret: server.clientSecret,
        accessToken: tokens.accessToken,
      }),
    ).rejects.toMatchObject({ code: 'reconnect_required' });
  });

  it('denial redirects with error=access_denied; a wrong redirect_uri or client secret gets no tokens', async () => {
    const url = new URL(buildAuthorizationUrl({ ...base(), redirectUri, state: 'x' }));
    url.searchParams.set('deny', '1');
    const res = await fetch(url, { redirect: 'manual' });
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('access_denied');

    const code = (await authorize('bob')).searchParams.get('code')!;
    await expect(exchangeCode({ ...base(), code, redirectUri: 'http://127.0.0.1:9/other' })).rejects.toThrow(
      /redirect_uri/,
    );
    const code2 = (await authorize('bob')).searchParams.get('code')!;
    await expect(exchangeCode({ ...base(), clientSecret: 'wrong', code: code2, redirectUri })).rejects.toThrow(
      /client_secret/,
    );
  });

  it('wrong application credentials fail the account list as broker_auth_failed', async () => {
    const { accessToken } = server.issueTokenFor('alice');
    await expect(
      listAccountsForToken({
        endpoint: endpoint(),
        clientId: server.clientId,
        clientSecret: 'nope',
        accessToken,
        timeoutMs: 1_000,
      }),
    ).rejects.toMatchObject({ code: 'broker_auth_failed' });
  });
});
