import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { storeContract } from './store-contract.js';

storeContract('PGlite (embedded, on disk)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ct-store-'));
  return {
    store: await Store.open({ dataDir: dir }),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

describe('embedded data dir', () => {
  it('refuses a second process-level open while in use, and keeps data across reopen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ct-lock-'));
    try {
      const a = await Store.open({ dataDir: dir });
      await a.users.create('keep@example.test', 'h');
      await a.close();
      const b = await Store.open({ dataDir: dir });
      expect((await b.users.byEmail('keep@example.test'))?.email).toBe('keep@example.test');
      await b.close();
      // Another live process holds the lock: opening must fail with a clear reason, not corrupt the store.
      writeFileSync(join(dir, 'copytrade.lock'), String(process.ppid));
      await expect(Store.open({ dataDir: dir })).rejects.toMatchObject({ code: 'data_dir_in_use' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
