import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Issue 46, finding 2: one address failing with many emails must not lock other people out of their accounts,
 * and the client address is the forwarded one only behind a proxy the operator names.
 */
const signIn = (svc: TestService, email: string, password: string, headers: Record<string, string> = {}) =>
  svc.call('POST', '/app/sign-in', { body: { email, password }, headers });
const lastFailure = async (svc: TestService, token: string) =>
  (await svc.call('GET', '/app/v1/events', { token })).body.events
    .filter((e: any) => e.type === 'user.sign_in_failed')
    .at(-1);

describe('sign-in throttling by address, with the default limits', () => {
  let svc: TestService;
  let other: { email: string; password: string };
  beforeAll(async () => {
    svc = await startTestService();
    other = { email: 'other-user@example.test', password: 'other-users-password' };
    await svc.deps.auth.createUser(other.email, other.password);
  }, 60_000);
  afterAll(async () => svc?.close());

  it("30 failures with random emails from one address do not refuse another user's right password", async () => {
    for (let i = 0; i < 30; i++) {
      const r = await signIn(svc, `random-${i}-${Math.random().toString(36).slice(2)}@example.test`, 'guess-123456');
      expect(r.status).toBe(401);
    }
    expect((await signIn(svc, other.email, other.password)).status).toBe(200);
    expect((await signIn(svc, svc.demo!.email, svc.demo!.password)).status).toBe(200);
  }, 60_000);
});

describe('sign-in throttling by address, once the address is over its limit', () => {
  let svc: TestService;
  const known = { email: 'known-here@example.test', password: 'known-users-password' };
  const stranger = { email: 'never-here@example.test', password: 'strangers-password' };
  beforeAll(async () => {
    svc = await startTestService({
      env: {
        COPYTRADE_SIGN_IN_ADDRESS_FREE_FAILURES: '8',
        COPYTRADE_SIGN_IN_BASE_DELAY_MS: '60000',
        COPYTRADE_SIGN_IN_MAX_DELAY_MS: '60000',
      },
    });
    await svc.deps.auth.createUser(known.email, known.password);
    await svc.deps.auth.createUser(stranger.email, stranger.password);
  }, 60_000);
  afterAll(async () => svc?.close());

  it('an account that signed in from the address before still signs in; others wait', async () => {
    expect((await signIn(svc, known.email, known.password)).status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await signIn(svc, `spray-${i}@example.test`, 'guess-123456')).status);
    expect(statuses.slice(0, 9)).toEqual(Array(9).fill(401));
    expect(statuses.slice(9)).toEqual([429, 429, 429]);
    // The address is waiting: a spray goes on being refused, an account new to the address waits too...
    expect((await signIn(svc, stranger.email, stranger.password)).status).toBe(429);
    // ...but an account that signed in from here before is not locked out by strangers' failures.
    expect((await signIn(svc, known.email, known.password)).status).toBe(200);
    // Its wrong password is still counted and throttled per account.
    expect((await signIn(svc, known.email, 'wrong-password')).status).toBe(401);
  }, 60_000);
});

describe('the client address behind a proxy', () => {
  let plain: TestService;
  let proxied: TestService;
  beforeAll(async () => {
    [plain, proxied] = await Promise.all([
      startTestService(),
      startTestService({ env: { COPYTRADE_TRUST_PROXY: '127.0.0.1' } }),
    ]);
  }, 60_000);
  afterAll(async () => Promise.all([plain?.close(), proxied?.close()]));

  it('X-Forwarded-For is ignored unless the peer is a configured proxy', async () => {
    const xff = { 'x-forwarded-for': '203.0.113.5' };
    for (const [svc, expected] of [
      [plain, '127.0.0.1'],
      [proxied, '203.0.113.5'],
    ] as const) {
      expect((await signIn(svc, svc.demo!.email, 'wrong-password', xff)).status).toBe(401);
      const token = (await signIn(svc, svc.demo!.email, svc.demo!.password)).body.accessToken;
      expect((await lastFailure(svc, token)).data.clientAddress).toBe(expected);
    }
  });

  it('behind the proxy, one client over its limit does not hold up another', async () => {
    const svc = proxied;
    for (let i = 0; i < 101; i++)
      await signIn(svc, `spray-${i}@example.test`, 'guess-123456', { 'x-forwarded-for': '203.0.113.66' });
    expect(
      (await signIn(svc, 'spray-x@example.test', 'guess-123456', { 'x-forwarded-for': '203.0.113.66' })).status,
    ).toBe(429);
    const other = await signIn(svc, svc.demo!.email, svc.demo!.password, { 'x-forwarded-for': '198.51.100.9' });
    expect(other.status).toBe(200);
  }, 120_000);
});

describe('COPYTRADE_TRUST_PROXY', () => {
  it('takes addresses, CIDR ranges and the proxy-addr names; anything else stops the start', async () => {
    const { parseTrustProxy } = await import('../../src/config/config.js');
    expect(parseTrustProxy(undefined)).toEqual([]);
    expect(parseTrustProxy(' 10.0.0.1, 10.1.0.0/16 ,loopback,fd00::/8 ')).toEqual([
      '10.0.0.1',
      '10.1.0.0/16',
      'loopback',
      'fd00::/8',
    ]);
    for (const bad of ['true', '*', '10.0.0.0/33', 'proxy.example', '1'])
      expect(() => parseTrustProxy(bad), bad).toThrow(/COPYTRADE_TRUST_PROXY/);
  });
});
