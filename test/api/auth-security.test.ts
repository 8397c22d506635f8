import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { startTestService, type TestService } from '../helpers/service.js';
import { CredentialBox } from '../../src/auth/credential-box.js';
import { randomBytes } from 'node:crypto';

let svc: TestService;
// Token and key lifetimes run on this clock, which stands still unless a test moves it.
let authNow = Date.now();

beforeAll(async () => {
  svc = await startTestService({ authClock: () => authNow });
  await svc.deps.auth.createUser('alice@example.test', 'correct horse battery');
});
afterAll(async () => svc?.close());

const signIn = (email: string, password: string) => svc.call('POST', '/app/sign-in', { body: { email, password } });

describe('sign-in tokens (family R)', () => {
  it('issues an expiring access token that works on family R and can be revoked by signing out', async () => {
    const r = await signIn('alice@example.test', 'correct horse battery');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ tokenType: 'Bearer', accessToken: expect.stringMatching(/^ctat_/) });
    expect(new Date(r.body.expiresAt).getTime()).toBeGreaterThan(Date.now());
    const t = r.body.accessToken;
    expect((await svc.call('GET', '/api/trading-accounts', { token: t })).status).toBe(200);
    expect((await svc.call('POST', '/app/sign-out', { token: t })).status).toBe(204);
    expect((await svc.call('GET', '/api/trading-accounts', { token: t })).status).toBe(401);
  });

  it('refuses a wrong password and an unknown email with the same 401', async () => {
    const a = await signIn('alice@example.test', 'wrong password');
    const b = await signIn('nobody@example.test', 'wrong password');
    expect([a.status, b.status]).toEqual([401, 401]);
    expect(a.body.error).toBe(b.body.error);
  });
});

describe('API keys (family V): created, listed, rotated with overlap, revoked; shown once', () => {
  it('runs the whole life of a key', async () => {
    const token = (await signIn('alice@example.test', 'correct horse battery')).body.accessToken;
    const created = await svc.call('POST', '/app/api-keys', { token, body: { name: 'bot' } });
    expect(created.status).toBe(201);
    const k1 = created.body.apiKey as string;
    expect(k1).toMatch(/^ctk_/);
    expect((await svc.call('GET', '/v1/me', { token: k1 })).status).toBe(200);

    const list = await svc.call('GET', '/app/api-keys', { token });
    expect(list.text).not.toContain(k1);
    expect(list.body.keys[0]).toMatchObject({ id: created.body.key.id, prefix: k1.slice(0, 10), state: 'active' });

    const rotated = await svc.call('POST', `/app/api-keys/${created.body.key.id}/rotate`, {
      token,
      body: { overlapSeconds: 1 },
    });
    expect(rotated.status).toBe(201);
    const k2 = rotated.body.apiKey as string;
    expect(k2).not.toBe(k1);
    // Both work inside the overlap window, only the new one after it.
    expect((await svc.call('GET', '/v1/me', { token: k1 })).status).toBe(200);
    expect((await svc.call('GET', '/v1/me', { token: k2 })).status).toBe(200);
    authNow += 1100;
    expect((await svc.call('GET', '/v1/me', { token: k1 })).status).toBe(401);
    expect((await svc.call('GET', '/v1/me', { token: k2 })).status).toBe(200);

    expect((await svc.call('DELETE', `/app/api-keys/${rotated.body.key.id}`, { token })).status).toBe(204);
    expect((await svc.call('GET', '/v1/me', { token: k2 })).status).toBe(401);
    // Another user's key id: the same 404 as an unknown one.
    const demoToken = svc.demo!.accessToken;
    const foreign = await svc.call('DELETE', `/app/api-keys/${created.body.key.id}`, { token: demoToken });
    const unknown = await svc.call('DELETE', '/app/api-keys/key_unknown', { token: demoToken });
    expect([foreign.status, unknown.status]).toEqual([404, 404]);
    expect(foreign.body.error).toBe(unknown.body.error);
  });
});

describe('secrets at rest and in logs', () => {
  it('stores only hashes of tokens and keys, never the values', async () => {
    const db = svc.store.database.db;
    const rows = async (table: string) =>
      ((await db.execute(sql.raw(`select * from ${table}`))) as unknown as { rows: unknown[] }).rows;
    const dump = JSON.stringify([
      await rows('access_tokens'),
      await rows('api_keys'),
      await rows('users'),
      await rows('request_records'),
    ]);
    expect(dump).not.toContain(svc.demo!.accessToken);
    expect(dump).not.toContain(svc.demo!.apiKey);
    expect(dump).not.toContain(svc.demo!.password);
    expect(dump).not.toContain('correct horse battery');
  });

  it('no secret appears in any log line', async () => {
    await signIn('alice@example.test', 'correct horse battery');
    await svc.call('GET', '/v1/accounts', { token: svc.demo!.apiKey });
    await svc.call('GET', '/api/trading-accounts', { token: svc.demo!.accessToken });
    const all = svc.logs.join('\n');
    expect(svc.logs.length).toBeGreaterThan(5);
    for (const secret of [svc.demo!.accessToken, svc.demo!.apiKey, svc.demo!.password, 'correct horse battery'])
      expect(all).not.toContain(secret);
  });

  it('seals broker credentials with AES-256-GCM: unreadable without the key, tamper-evident', () => {
    const box = new CredentialBox(randomBytes(32));
    const sealed = box.seal({ password: 'broker-pass-123' });
    expect(sealed).not.toContain('broker-pass-123');
    expect(box.open(sealed)).toEqual({ password: 'broker-pass-123' });
    expect(() => new CredentialBox(randomBytes(32)).open(sealed)).toThrow();
    const parts = sealed.split('.');
    parts[3] = Buffer.from('tampered').toString('base64url');
    expect(() => box.open(parts.join('.'))).toThrow();
  });
});
