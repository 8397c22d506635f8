import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminOp } from '../../src/admin/ops.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Issue 46, finding 3: a chain of rotations must not get around the key quota or the per-key rate limit. A
 * rotated key counts toward the quota while it works and spends its successor's rate budget, a lineage has at
 * most one key in its overlap, the overlap is bounded by COPYTRADE_API_KEY_OVERLAP_SEC, and a password change
 * or reset can revoke the user's keys.
 */
let svc: TestService;
let n = 0;

beforeAll(async () => {
  svc = await startTestService({
    env: {
      COPYTRADE_QUOTA_API_KEYS: '2',
      COPYTRADE_V1_READS_PER_WINDOW: '6',
      COPYTRADE_V1_LIMIT_WINDOW_SEC: '3600',
      COPYTRADE_API_KEY_OVERLAP_SEC: '3600',
      COPYTRADE_QUOTA_EVENT_STREAMS_PER_KEY: '2',
    },
  });
}, 60_000);
afterAll(async () => svc?.close());

async function newUser(): Promise<{ email: string; token: string }> {
  const email = `rot-${++n}@example.test`;
  await svc.deps.auth.createUser(email, 'rotation-password');
  const token = (await svc.call('POST', '/app/sign-in', { body: { email, password: 'rotation-password' } })).body
    .accessToken;
  return { email, token };
}
const createKey = (token: string, name: string) => svc.call('POST', '/app/api-keys', { token, body: { name } });
const rotate = (token: string, id: string, body: unknown = {}) =>
  svc.call('POST', `/app/api-keys/${id}/rotate`, { token, body });
const me = async (key: string) => (await svc.call('GET', '/v1/me', { token: key })).status;

describe('rotation chains', () => {
  it('a rotated key counts toward the quota while it works', async () => {
    const { token } = await newUser();
    const k1 = await createKey(token, 'one');
    expect(k1.status).toBe(201);
    expect((await rotate(token, k1.body.key.id)).status).toBe(201);
    // Two keys work now (the rotated one inside its overlap): the quota of 2 is full.
    const third = await createKey(token, 'two');
    expect(third.status, JSON.stringify(third.body)).toBe(409);
    expect(third.body.code).toBe('quota_exceeded');
  });

  it('a lineage has one key in its overlap: rotating again ends the oldest; a replaced key cannot be rotated', async () => {
    const { token } = await newUser();
    const k1 = (await createKey(token, 'chain')).body;
    const r1 = (await rotate(token, k1.key.id)).body;
    const r2 = await rotate(token, r1.key.id);
    expect(r2.status).toBe(201);
    expect(await me(k1.apiKey)).toBe(401);
    expect(await me(r1.apiKey)).toBe(200);
    expect(await me(r2.body.apiKey)).toBe(200);
    const again = await rotate(token, r1.key.id);
    expect(again.status, JSON.stringify(again.body)).toBe(409);
    expect(again.body.error).toContain(r2.body.key.id);
  });

  it('a rotated key spends the rate budget of its successor', async () => {
    const { token } = await newUser();
    const k1 = (await createKey(token, 'budget')).body;
    const k2 = (await rotate(token, k1.key.id)).body;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push(await me(k1.apiKey), await me(k2.apiKey));
    expect(statuses.filter((s) => s === 200)).toHaveLength(6);
    expect(statuses.slice(6)).toEqual([429, 429]);
  });

  it("a rotated key's event streams count toward its successor's", async () => {
    const { token } = await newUser();
    const k1 = (await createKey(token, 'streams')).body;
    const k2 = (await rotate(token, k1.key.id)).body;
    const open = async (key: string) => {
      const ctrl = new AbortController();
      const res = await fetch(`${svc.baseUrl}/v1/events/stream`, {
        headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
        signal: ctrl.signal,
      });
      return { status: res.status, ctrl };
    };
    const streams = [await open(k1.apiKey), await open(k2.apiKey), await open(k1.apiKey)];
    try {
      expect(streams.map((x) => x.status)).toEqual([200, 200, 429]);
    } finally {
      for (const x of streams) x.ctrl.abort();
    }
  });

  it('revoking a key ends its predecessor in the overlap too', async () => {
    const { token } = await newUser();
    const k1 = (await createKey(token, 'revoke')).body;
    const k2 = (await rotate(token, k1.key.id)).body;
    expect((await svc.call('DELETE', `/app/api-keys/${k2.key.id}`, { token })).status).toBe(204);
    expect(await me(k1.apiKey)).toBe(401);
    expect(await me(k2.apiKey)).toBe(401);
  });

  it('the overlap is at most COPYTRADE_API_KEY_OVERLAP_SEC (also its default)', async () => {
    const { token } = await newUser();
    const k1 = (await createKey(token, 'overlap')).body;
    const tooLong = await rotate(token, k1.key.id, { overlapSeconds: 3601 });
    expect(tooLong.status, JSON.stringify(tooLong.body)).toBe(400);
    const before = Date.now();
    const ok = await rotate(token, k1.key.id);
    expect(ok.status).toBe(201);
    const ends = Date.parse(ok.body.previousKeyExpiresAt) - before;
    expect(ends).toBeGreaterThan(3590_000);
    expect(ends).toBeLessThanOrEqual(3601_000);
    await expect(svc.deps.auth.rotateApiKey('usr_x', 'key_x', 30 * 86400)).rejects.toThrow(/at most 3600/);
  });
});

describe('a password change or reset can revoke the API keys', () => {
  it('POST /app/password with revokeApiKeys: true revokes every key; without it they keep working', async () => {
    const { email, token } = await newUser();
    const k1 = (await createKey(token, 'pw')).body;
    const k2 = (await rotate(token, k1.key.id)).body;
    const keep = await svc.call('POST', '/app/password', {
      token,
      body: { currentPassword: 'rotation-password', newPassword: 'second-password' },
    });
    expect(keep.status).toBe(200);
    expect(keep.body.apiKeysRevoked).toBe(0);
    expect(await me(k2.apiKey)).toBe(200);
    const revoke = await svc.call('POST', '/app/password', {
      token: keep.body.accessToken,
      body: { currentPassword: 'second-password', newPassword: 'third-password', revokeApiKeys: true },
    });
    expect(revoke.status, JSON.stringify(revoke.body)).toBe(200);
    expect(revoke.body.apiKeysRevoked).toBe(2);
    expect(await me(k1.apiKey)).toBe(401);
    expect(await me(k2.apiKey)).toBe(401);

    const k3 = (await createKey(revoke.body.accessToken, 'after')).body;
    const d = { store: svc.store, auth: svc.deps.auth };
    // The operator's command (copytrade users reset-password [--revoke-api-keys]) says what it did.
    expect(await runAdminOp(d, 'users.reset-password', { email, password: 'operator-password' })).toMatchObject({
      tokensRevoked: expect.any(Number),
      apiKeysRevoked: 0,
    });
    expect(await me(k3.apiKey)).toBe(200);
    const reset = await runAdminOp(d, 'users.reset-password', {
      email,
      password: 'operator-password-2',
      revokeApiKeys: true,
    });
    expect(reset).toMatchObject({ apiKeysRevoked: 1 });
    expect(await me(k3.apiKey)).toBe(401);
  });
});
