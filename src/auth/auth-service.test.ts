import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../store/store.js';
import { AuthService } from './auth-service.js';
import { generateSecret, API_KEY_PREFIX } from './secrets.js';

// The bearer's hash is memoised (SecretHashes); whether the credential is live must still be asked every time.
describe('AuthService: a remembered bearer still stops working the moment it is revoked', () => {
  let store: Store;
  let auth: AuthService;
  let userId: string;
  beforeAll(async () => {
    store = await Store.open({ dataDir: ':memory:' });
    auth = new AuthService(store, { accessTokenTtlSec: 3600, apiKeyOverlapSec: 0 });
    userId = (await auth.createUser('memo@example.test', 'memo-password-123')).id;
  });
  afterAll(async () => {
    await store.close();
  });

  it('API key: revoked, then rotated out with no overlap', async () => {
    const { key, apiKey } = await auth.createApiKey(userId, 'bot');
    for (let i = 0; i < 3; i++) expect((await auth.authenticateApiKey(apiKey))?.credentialId).toBe(key.id);
    expect(await auth.revokeApiKey(userId, key.id)).toBe(true);
    expect(await auth.authenticateApiKey(apiKey)).toBeNull();

    const second = await auth.createApiKey(userId, 'bot2');
    expect((await auth.authenticateApiKey(second.apiKey))?.userId).toBe(userId);
    const rotated = await auth.rotateApiKey(userId, second.key.id, 0);
    expect(await auth.authenticateApiKey(second.apiKey)).toBeNull();
    expect((await auth.authenticateApiKey(rotated!.apiKey))?.userId).toBe(userId);
  });

  it('access token: revoked', async () => {
    const t = await auth.issueToken(userId);
    expect((await auth.authenticateToken(t.accessToken))?.credentialId).toBe(t.tokenId);
    expect(await auth.revokeToken(userId, t.tokenId)).toBe(true);
    expect(await auth.authenticateToken(t.accessToken)).toBeNull();
  });

  it('a key of one kind is not taken for the other, malformed and unknown ones are refused', async () => {
    const { apiKey } = await auth.createApiKey(userId, 'kinds');
    expect(await auth.authenticateApiKey(apiKey)).not.toBeNull();
    expect(await auth.authenticateToken(apiKey)).toBeNull();
    // One character changed (when the key already ended in x, "x" was no change: 1 run in the alphabet's size).
    const altered = `${apiKey.slice(0, -1)}${apiKey.endsWith('x') ? 'y' : 'x'}`;
    expect(await auth.authenticateApiKey(altered)).toBeNull();
    expect(await auth.authenticateApiKey(generateSecret(API_KEY_PREFIX))).toBeNull();
  });
});
