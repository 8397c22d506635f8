import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CredentialBox } from '../../src/auth/credential-box.js';
import { Store } from '../../src/store/store.js';
import { harness } from './harness.js';
import { Receiver } from './receiver.js';

describe('webhook delivery across a restart', () => {
  it('delivers events written before the service died, after it comes back on the same data dir', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ct-wh-restart-'));
    const rx = await new Receiver().up();
    const box = new CredentialBox(randomBytes(32));
    try {
      // First life: the state changes (and their events) commit, but the process dies before any delivery.
      const first = await harness({ store: await Store.open({ dataDir: dir }), box, start: false });
      const { secret } = await first.hooks.service.create(first.userId, { url: rx.url });
      rx.secrets = [secret];
      for (let i = 0; i < 12; i++) await first.emit(`acc_${i % 2}`, 'copy.confirmed', { i });
      await first.store.close();
      expect(rx.all).toHaveLength(0);

      // Second life: a new store on the same dir and a new deliverer; nothing in memory survived.
      const store = await Store.open({ dataDir: dir });
      const second = await harness({ store, box, userId: first.userId });
      try {
        await rx.until(() => rx.accepted.length >= 12, 15_000, 'the 12 events written before the restart');
        // Nothing left to send (the cursor is at the last event), so no duplicate can still come.
        const [ep] = await second.hooks.service.list(second.userId);
        await expect
          .poll(async () => (await second.hooks.repo.byId(ep!.id))?.deliveredCursor, { timeout: 10_000, interval: 20 })
          .toBe(await second.hooks.repo.latestCursor(second.userId));
        expect(rx.accepted.map((r) => r.id)).toHaveLength(12);
        expect(new Set(rx.accepted.map((r) => r.id)).size).toBe(12);
        for (const a of ['acc_0', 'acc_1'])
          expect(rx.accepted.filter((r) => r.accountId === a).map((r) => r.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
        expect(rx.accepted.every((r) => r.verifiedBy.length === 1)).toBe(true);
      } finally {
        await second.hooks.stop();
        await store.close();
      }
    } finally {
      await rx.down();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
