import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatLockOwner, identify, parseLockOwner } from '../../src/config/process-identity.js';
import { storeTemplate } from '../../src/store/db.js';
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
      // The same, written as this version writes it: pid and start time.
      writeFileSync(join(dir, 'copytrade.lock'), formatLockOwner(identify(process.ppid)));
      await expect(Store.open({ dataDir: dir })).rejects.toMatchObject({ code: 'data_dir_in_use' });
      // A lock left by a process that died, whose pid another program now has (after a kill -9 and a reboot):
      // the start time differs, so the lock is stale and taken over.
      writeFileSync(join(dir, 'copytrade.lock'), `${process.ppid} 1`);
      const c = await Store.open({ dataDir: dir });
      expect(parseLockOwner(readFileSync(join(dir, 'copytrade.lock'), 'utf8'))).toEqual(identify(process.pid));
      await c.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  // The build makes the template (`npm ci` runs it); a checkout never built has none and runs initdb instead.
  it.skipIf(!existsSync(join(storeTemplate(), 'PG_VERSION')))(
    'a new data dir starts as a copy of the build template, even after a start killed mid-copy',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'ct-template-'));
      try {
        // What a kill during the copy leaves: a partial copy beside, never a half cluster in place.
        mkdirSync(join(dir, 'pgdata.copying', 'base'), { recursive: true });
        const store = await Store.open({ dataDir: dir });
        await store.users.create('first@example.test', 'h');
        expect((await store.users.byEmail('first@example.test'))?.email).toBe('first@example.test');
        await store.close();
        expect(existsSync(join(dir, 'pgdata.copying'))).toBe(false);
        expect(readFileSync(join(dir, 'pgdata', 'PG_VERSION'), 'utf8')).toBe(
          readFileSync(join(storeTemplate(), 'PG_VERSION'), 'utf8'),
        );
        // The template itself stays empty: what a data dir writes is its own.
        const again = await Store.open({ dataDir: mkdtempSync(join(dir, 'second-')) });
        expect(await again.users.byEmail('first@example.test')).toBeNull();
        await again.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
