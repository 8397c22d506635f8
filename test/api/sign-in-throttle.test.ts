import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let email: string;
let password: string;

beforeAll(async () => {
  // A 5 s wait after the 6th failure: long enough that a burst on a busy machine runs inside it.
  svc = await startTestService({
    env: {
      COPYTRADE_SIGN_IN_FREE_FAILURES: '5',
      COPYTRADE_SIGN_IN_ADDRESS_FREE_FAILURES: '8',
      COPYTRADE_SIGN_IN_BASE_DELAY_MS: '5000',
      COPYTRADE_SIGN_IN_MAX_DELAY_MS: '5000',
    },
  });
  email = svc.demo!.email;
  password = svc.demo!.password;
}, 60_000);
afterAll(async () => svc?.close());

const signIn = (pw: string, who = email) => svc.call('POST', '/app/sign-in', { body: { email: who, password: pw } });
const eventsOf = async (token: string, type: string) =>
  (await svc.call('GET', '/app/v1/events', { token })).body.events.filter((e: any) => e.type === type);

describe('sign-in throttling', () => {
  it('30 wrong passwords: 5 answered, then growing waits refuse with 429 and Retry-After, the right password too; after the wait the owner signs in', async () => {
    const statuses: number[] = [];
    let lastRefusal: Awaited<ReturnType<typeof signIn>> | null = null;
    for (let i = 0; i < 30; i++) {
      const r = await signIn(`wrong-password-${i}`);
      statuses.push(r.status);
      if (r.status === 429) lastRefusal = r;
    }
    expect(statuses.slice(0, 6)).toEqual([401, 401, 401, 401, 401, 401]);
    expect(statuses.slice(6).every((s) => s === 429)).toBe(true);
    expect(lastRefusal!.body).toMatchObject({ code: 'rate_limited', requestId: expect.any(String) });
    const wait = Number(lastRefusal!.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(5);

    // Straight after: the right password waits as well (the password is not even checked).
    const right = await signIn(password);
    expect(right.status).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // No lock-out: once the wait is over the owner is in.
    await expect.poll(async () => (await signIn(password)).status, { timeout: 15_000, interval: 500 }).toBe(200);
  }, 40_000);

  it('the owner sees each wrong password as a user.sign_in_failed event (only those that were checked)', async () => {
    const token = (await signIn(password)).body.accessToken;
    const failed = await eventsOf(token, 'user.sign_in_failed');
    expect(failed).toHaveLength(6);
    expect(failed[0]).toMatchObject({
      accountId: null,
      data: { attempt: 'sign_in', clientAddress: '127.0.0.1', failures: 1, retryAfterSec: null },
    });
    expect(failed[5].data).toMatchObject({ failures: 6, retryAfterSec: 5 });
  });

  it('one address trying many accounts is slowed down too, whatever the accounts', async () => {
    // The address has 6 failures from the first test; free up to 8.
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await signIn('wrong-password', `nobody-${i}@example.test`)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    // An account new to the address waits with it; the owner, who signed in from here before, does not (issue 46).
    await svc.deps.auth.createUser('new-here@example.test', 'new-here-password');
    expect((await signIn('new-here-password', 'new-here@example.test')).status).toBe(429);
    expect((await signIn(password)).status).toBe(200);
    await expect
      .poll(async () => (await signIn('new-here-password', 'new-here@example.test')).status, {
        timeout: 15_000,
        interval: 500,
      })
      .toBe(200);
  }, 40_000);
});

describe('password change', () => {
  // The address's count from the tests above would slow these down: they start from a clean slate.
  beforeAll(async () => {
    await svc.store.database.db.execute(sql`delete from sign_in_failures`);
  });

  it('needs the current password; revokes every access token of the user and returns a new one; API keys keep working', async () => {
    const a = (await signIn(password)).body.accessToken;
    const b = (await signIn(password)).body.accessToken;
    const wrong = await svc.call('POST', '/app/password', {
      token: a,
      body: { currentPassword: 'not-it-at-all', newPassword: 'a-new-password-1' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toContain('current password is wrong');
    expect((await eventsOf(a, 'user.sign_in_failed')).at(-1).data).toMatchObject({ attempt: 'password_change' });

    const ok = await svc.call('POST', '/app/password', {
      token: a,
      body: { currentPassword: password, newPassword: 'a-new-password-1' },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.tokensRevoked).toBeGreaterThanOrEqual(2);
    expect((await svc.call('GET', '/app/api-keys', { token: a })).status).toBe(401);
    expect((await svc.call('GET', '/app/api-keys', { token: b })).status).toBe(401);
    expect((await svc.call('GET', '/app/api-keys', { token: ok.body.accessToken })).status).toBe(200);
    expect((await svc.call('GET', '/v1/me', { token: svc.demo!.apiKey })).status).toBe(200);
    expect((await signIn(password)).status).toBe(401);
    expect((await signIn('a-new-password-1')).status).toBe(200);
    const changed = await eventsOf(ok.body.accessToken, 'user.password_changed');
    expect(changed.at(-1).data).toEqual({ by: 'user', tokensRevoked: ok.body.tokensRevoked });
    // Neither password is kept in the request records (no digest of a body that holds one, no token).
    const stored = JSON.stringify(
      (await svc.store.requests.list((await svc.store.users.byEmail(email))!.id, { limit: 50 })).filter(
        (r) => r.route === '/app/password',
      ),
    );
    expect(stored).not.toContain(ok.body.accessToken);
    expect(stored).not.toMatch(/"bodyDigest":"[0-9a-f]{64}"/);
  });

  it("the operator's reset revokes the user's access tokens and lifts the account's sign-in wait", async () => {
    const t = (await signIn('a-new-password-1')).body.accessToken;
    // Six wrong tries from elsewhere set a wait on the account (the address 127.0.0.1 stays under its own limit).
    for (let i = 0; i < 6; i++) await svc.deps.auth.signIn(email, 'wrong-password', '192.0.2.7').catch(() => undefined);
    expect((await signIn('a-new-password-1')).status).toBe(429);
    const r = await svc.deps.auth.resetPassword(email, 'operator-set-pw');
    expect(r.tokensRevoked).toBeGreaterThanOrEqual(1);
    expect((await svc.call('GET', '/app/api-keys', { token: t })).status).toBe(401);
    expect((await signIn('operator-set-pw')).status).toBe(200);
  });
});
