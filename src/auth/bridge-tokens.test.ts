import { describe, expect, it } from 'vitest';
import { BRIDGE_TOKEN_PREFIX, BridgeTokens, MemoryBridgeTokenRepo } from './bridge-tokens.js';
import { hashSecret } from './secrets.js';

describe('bridge tokens', () => {
  const clock = () => {
    let t = Date.parse('2026-01-01T00:00:00Z');
    return { now: () => new Date(t), advance: (ms: number) => (t += ms) };
  };

  it('are shown once and stored as their hash only', async () => {
    const repo = new MemoryBridgeTokenRepo();
    const tokens = new BridgeTokens(repo);
    const issued = await tokens.create('acc_1');
    expect(issued.token.startsWith(BRIDGE_TOKEN_PREFIX)).toBe(true);
    const [rec] = await repo.byAccount('acc_1');
    expect(rec!.hash).toBe(hashSecret(issued.token));
    expect(JSON.stringify(await repo.byAccount('acc_1'))).not.toContain(issued.token);
    expect(JSON.stringify(await tokens.list('acc_1'))).not.toContain(rec!.hash);
    expect(await tokens.verify(issued.token)).toEqual({ tokenId: issued.id, accountId: 'acc_1' });
  });

  it('a rotation keeps the old token working for the overlap, then only the new one', async () => {
    const c = clock();
    const tokens = new BridgeTokens(new MemoryBridgeTokenRepo(), c.now);
    const old = await tokens.create('acc_1');
    const fresh = await tokens.rotate('acc_1', 3600);
    expect(await tokens.verify(old.token)).not.toBeNull();
    expect(await tokens.verify(fresh.token)).not.toBeNull();
    c.advance(3600 * 1000);
    expect(await tokens.verify(old.token)).toBeNull();
    expect(await tokens.verify(fresh.token)).toMatchObject({ accountId: 'acc_1' });
    expect((await tokens.list('acc_1')).map((t) => t.live)).toEqual([false, true]);
  });

  it('a revoked, unknown, malformed or typo token opens nothing; revoking a foreign token is unknown', async () => {
    const tokens = new BridgeTokens(new MemoryBridgeTokenRepo());
    const a = await tokens.create('acc_1');
    expect(await tokens.revoke('acc_2', a.id)).toBe(false);
    expect(await tokens.verify(a.token)).not.toBeNull();
    expect(await tokens.revoke('acc_1', a.id)).toBe(true);
    expect(await tokens.verify(a.token)).toBeNull();
    expect(await tokens.verify('ctbt_x')).toBeNull();
    const b = await tokens.create('acc_1');
    expect(await tokens.verify(`${b.token.slice(0, -2)}zz`)).toBeNull();
  });
});
