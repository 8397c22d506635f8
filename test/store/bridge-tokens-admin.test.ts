import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminOp } from '../../src/admin/ops.js';
import { AuthService } from '../../src/auth/auth-service.js';
import { BridgeTokens } from '../../src/auth/bridge-tokens.js';
import { Decimal } from '../../src/domain/decimal.js';
import { Store } from '../../src/store/store.js';

/** The CLI's `bridge-tokens` commands (operator ops) on the store: migration 0019's table, hashes only. */
describe('bridge tokens on the store, through the operator commands', () => {
  let store: Store;
  let deps: { store: Store; auth: AuthService };
  let accountId: string;
  beforeAll(async () => {
    store = await Store.open({ dataDir: ':memory:', embeddedFsync: false });
    const auth = new AuthService(store, { accessTokenTtlSec: 3600, apiKeyOverlapSec: 0 });
    deps = { store, auth };
    // Users made on the store directly: the password hashing of createUser is not what this tests.
    const u = await store.users.create('ea-owner@example.test', 'x');
    const a = await store.accounts.create({
      userId: u.id,
      platform: 'platforma',
      role: 'slave',
      name: 'self-hosted',
      groupId: null,
      brokerAccountId: '5551',
      brokerAccountNumber: '5551',
      brokerIdentity: 'platforma:sim-self:5551',
      balance: new Decimal(1),
      equity: new Decimal(1),
    });
    accountId = a.id;
    await store.users.create('other@example.test', 'x');
  });
  afterAll(() => store?.close());

  it('creates (shown once, stored hashed), rotates with overlap, lists without values, revokes', async () => {
    const args = { email: 'ea-owner@example.test', account: accountId };
    const first = (await runAdminOp(deps, 'bridge-tokens.create', args)) as { id: string; token: string };
    const tokens = new BridgeTokens(store.bridgeTokens);
    expect(await tokens.verify(first.token)).toEqual({ tokenId: first.id, accountId });
    expect(JSON.stringify(await store.bridgeTokens.byAccount(accountId))).not.toContain(first.token);
    const second = (await runAdminOp(deps, 'bridge-tokens.rotate', { ...args, overlap: 0 })) as { token: string };
    expect(await tokens.verify(first.token)).toBeNull();
    expect(await tokens.verify(second.token)).toMatchObject({ accountId });
    const list = (await runAdminOp(deps, 'bridge-tokens.list', args)) as Array<{ live: boolean }>;
    expect(list.map((t) => t.live)).toEqual([false, true]);
    expect(JSON.stringify(list)).not.toMatch(/hash|ctbt_/);
    await runAdminOp(deps, 'bridge-tokens.revoke', { ...args, id: first.id });
    await expect(runAdminOp(deps, 'bridge-tokens.revoke', { ...args, id: 'btk_nope' })).rejects.toThrow(
      /no bridge token/,
    );
  });

  it("another user's account is as unknown as a missing one", async () => {
    await expect(
      runAdminOp(deps, 'bridge-tokens.create', { email: 'other@example.test', account: accountId }),
    ).rejects.toThrow(/no platform A account/);
    await expect(
      runAdminOp(deps, 'bridge-tokens.create', { email: 'ea-owner@example.test', account: 'acc_nope' }),
    ).rejects.toThrow(/no platform A account/);
  });
});
