import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../src/auth/totp.js';
import { startTestService, type TestService } from '../helpers/service.js';

/** The TOTP second factor through the dashboard's routes (docs/people.md): enrol, sign in with it, recover, disable. */
let svc: TestService;
const email = 'totp@example.test';
const password = 'correct horse battery';

const signIn = () => svc.call('POST', '/app/sign-in', { body: { email, password } });
const second = (challenge: string, code: string) =>
  svc.call('POST', '/app/sign-in/second-factor', { body: { challenge, code } });

// A clock held 5 s into a time step, moved by the test: codes never roll over between two calls.
let now = 1_800_000_005_000;

beforeAll(async () => {
  svc = await startTestService({ authClock: () => now });
  await svc.deps.auth.createUser(email, password);
});
afterAll(async () => svc?.close());

describe('the TOTP second factor', () => {
  let secret: string;
  let recovery: string[];

  it('enrols with a secret and its otpauth URI, and goes on with the first code', async () => {
    const token = (await signIn()).body.accessToken as string;
    const e = await svc.call('POST', '/app/second-factor/enrol', { token });
    expect(e.status).toBe(200);
    secret = e.body.secret;
    expect(e.body.otpauthUri).toContain(`secret=${secret}`);
    const wrong = await svc.call('POST', '/app/second-factor/confirm', { token, body: { code: '000000' } });
    expect([wrong.status, wrong.body.code]).toEqual([400, 'invalid_request']);
    const ok = await svc.call('POST', '/app/second-factor/confirm', {
      token,
      body: { code: totpCode(secret, now) },
    });
    expect(ok.status).toBe(200);
    recovery = ok.body.recoveryCodes;
    expect(recovery).toHaveLength(10);
    const status = await svc.call('GET', '/app/second-factor', { token });
    expect(status.body).toEqual({ enabled: true, pending: false, recoveryCodesLeft: 10 });
  });

  it('keeps the secret sealed and the recovery codes hashed at rest', async () => {
    const rows = await svc.store.database.db.execute(
      sql`select u.totp_secret_enc as s, r.code_hash as h from users u join recovery_codes r on r.user_id = u.id`,
    );
    const list = (rows as unknown as { rows: Array<{ s: string; h: string }> }).rows;
    expect(list).toHaveLength(10);
    expect(list[0]!.s.startsWith('v2.')).toBe(true);
    const stored = JSON.stringify(list);
    expect(stored).not.toContain(secret);
    for (const c of recovery) expect(stored).not.toContain(c.replace('-', ''));
  });

  it('asks for the code after the password; a wrong or replayed code is refused, the next one signs in', async () => {
    const first = await signIn();
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ secondFactorRequired: true, challenge: expect.any(String) });
    expect(first.body.accessToken).toBeUndefined();
    expect((await second(first.body.challenge, '123456')).status).toBe(401);
    // The confirming code's step was used: the same code again is refused (RFC 6238 section 5.2).
    expect((await second(first.body.challenge, totpCode(secret, now))).status).toBe(401);
    now += 30_000;
    const ok = await second(first.body.challenge, totpCode(secret, now));
    expect(ok.status).toBe(200);
    expect((await svc.call('GET', '/app/v1/me', { token: ok.body.accessToken })).status).toBe(200);
    // The challenge is single use.
    expect((await second(first.body.challenge, recovery[0]!)).status).toBe(401);
  });

  it('takes a recovery code once', async () => {
    const a = await signIn();
    expect((await second(a.body.challenge, recovery[1]!.toUpperCase())).status).toBe(200);
    const b = await signIn();
    expect((await second(b.body.challenge, recovery[1]!)).status).toBe(401);
    expect((await second(b.body.challenge, recovery[2]!)).status).toBe(200);
  });

  it('turns off with a code, and sign-in gives a token again', async () => {
    const c = await signIn();
    const token = (await second(c.body.challenge, recovery[3]!)).body.accessToken as string;
    expect((await svc.call('POST', '/app/second-factor/disable', { token, body: { code: '000000' } })).status).toBe(
      400,
    );
    const off = await svc.call('POST', '/app/second-factor/disable', { token, body: { code: recovery[4]! } });
    expect(off.status).toBe(204);
    const plain = await signIn();
    expect(plain.body.accessToken).toEqual(expect.any(String));
  });
});
