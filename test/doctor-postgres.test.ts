import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { runDoctor } from '../src/doctor/doctor.js';
import { Store } from '../src/store/store.js';
import { requirePostgres, tempDatabase } from './helpers/postgres.js';

const available = await requirePostgres();

const storeCheck = async (databaseUrl: string) => {
  const cfg = loadConfig({ dataDir: ':memory:' }, { DATABASE_URL: databaseUrl });
  const rs = await runDoctor({ cfg, env: {}, platforms: [], timeoutMs: 2000 });
  return rs.find((r) => r.check === 'store')!;
};

describe('copytrade doctor on PostgreSQL', () => {
  it('a server that refuses the connection fails the store check, naming DATABASE_URL', async () => {
    const r = await storeCheck('postgres://postgres@127.0.0.1:1/copytrade');
    expect(r).toMatchObject({ status: 'fail', fix: expect.stringContaining('DATABASE_URL') });
    expect(r.detail).toMatch(/^PostgreSQL at 127\.0\.0\.1:1\/copytrade unreachable: ECONNREFUSED/);
  });

  it.runIf(available)(
    'an unmigrated database fails and names `copytrade migrate`; migrated, it passes',
    async () => {
      const db = await tempDatabase();
      try {
        const before = await storeCheck(db.url);
        expect(before).toMatchObject({ status: 'fail', fix: expect.stringContaining('copytrade migrate') });
        expect(before.detail).toMatch(/has 0 of \d+ migrations applied/);
        const store = await Store.open({ dataDir: ':unused:', databaseUrl: db.url });
        await store.close();
        const after = await storeCheck(db.url);
        expect(after).toMatchObject({
          status: 'ok',
          detail: expect.stringMatching(/answers, all \d+ migrations applied/),
        });
      } finally {
        await db.drop();
      }
    },
    60_000,
  );
});
