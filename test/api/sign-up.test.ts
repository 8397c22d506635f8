import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SmtpSink } from '../alerts/servers.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Sign-up with email verification (docs/people.md) through a real SMTP server on loopback: the link arrives by
 * email, sign-in waits for it, the link works once, and a flood of sign-ups from one address is throttled.
 */
let svc: TestService;
let smtp: SmtpSink;

beforeAll(async () => {
  smtp = await new SmtpSink('relay', 'relay-pass').up();
  svc = await startTestService({
    env: {
      COPYTRADE_SIGN_UP: 'on',
      COPYTRADE_PUBLIC_URL: 'https://copy.example.test',
      COPYTRADE_SMTP_HOST: '127.0.0.1',
      COPYTRADE_SMTP_PORT: String(smtp.port),
      COPYTRADE_SMTP_USER: 'relay',
      COPYTRADE_SMTP_PASSWORD: 'relay-pass',
      COPYTRADE_SMTP_FROM: 'copytrade <accounts@relay.test>',
    },
  });
});
afterAll(async () => {
  await svc?.close();
  await smtp?.down();
});

const linkIn = (to: string) =>
  vi.waitFor(
    () => {
      const mail = [...smtp.mails].reverse().find((m) => m.to.includes(to));
      const link = mail && /https:\/\/copy\.example\.test\/verify-email\?token=(\S+)/.exec(mail.body);
      if (!link) throw new Error(`no verification email to ${to} yet`);
      return decodeURIComponent(link[1]!);
    },
    { timeout: 10_000, interval: 20 },
  );

describe('sign-up', () => {
  it('says it is on', async () => {
    expect((await svc.call('GET', '/app/sign-up')).body).toEqual({ enabled: true });
  });

  it('sends a verification link; sign-in waits for it; the link works once', async () => {
    const email = 'newcomer@example.test';
    const up = await svc.call('POST', '/app/sign-up', { body: { email, password: 'correct horse battery' } });
    expect(up.status).toBe(202);
    const token = await linkIn(email);
    const before = await svc.call('POST', '/app/sign-in', { body: { email, password: 'correct horse battery' } });
    expect(before.status).toBe(401);
    expect(before.body.error).toContain('verify');
    // Only the hash of the link's token is stored.
    expect(JSON.stringify(await svc.store.database.db.execute('select * from one_time_tokens'))).not.toContain(token);
    const v = await svc.call('POST', '/app/verify-email', { body: { token } });
    expect(v.body).toEqual({ verified: true, email });
    const again = await svc.call('POST', '/app/verify-email', { body: { token } });
    expect([again.status, again.body.code]).toEqual([400, 'invalid_request']);
    const after = await svc.call('POST', '/app/sign-in', { body: { email, password: 'correct horse battery' } });
    expect(after.body.accessToken).toEqual(expect.any(String));
  });

  it('answers the same for an address that has an account, and sends it nothing', async () => {
    const sent = smtp.mails.length;
    const r = await svc.call('POST', '/app/sign-up', {
      body: { email: 'demo@copytrade.local', password: 'whatever-123' },
    });
    expect(r.status).toBe(202);
    expect(smtp.mails.length).toBe(sent);
  });

  it('throttles a flood from one address like failed sign-ins', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await svc.call('POST', '/app/sign-up', {
        body: { email: 'same@example.test', password: 'correct horse battery' },
      });
      codes.push(r.status);
    }
    expect(codes.slice(0, 5).every((c) => c === 202)).toBe(true);
    expect(codes).toContain(429);
  });
});
