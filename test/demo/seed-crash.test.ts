import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { DEMO_EMAIL, SPARE_KEYS, demoSpecs } from '../../src/demo/seed.js';
import { startService } from '../../src/main.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';

const dirs: string[] = [];
const drops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const drop of drops) await drop();
});

const pgOk = await requirePostgres();
// PGlite on disk is slow to create on a busy machine: one interruption point there, the spread on PostgreSQL.
const stores: Array<{ name: string; url: () => Promise<string>; stops: string[] }> = [
  { name: 'PGlite', url: async () => '', stops: ['broker:b-2'] },
];
if (pgOk) {
  stores.push({
    name: 'PostgreSQL',
    stops: ['user', 'broker:b-2', 'store:c-slave', 'rule:a-group-slave'],
    url: async () => {
      const db = await tempDatabase();
      drops.push(db.drop);
      return db.url;
    },
  });
}

/** A start interrupted after `stopAt`, then a plain start on the same data dir (and database). */
async function interruptedThenRestarted(databaseUrl: string, stopAt: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'ct-seedcrash-'));
  dirs.push(dataDir);
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    COPYTRADE_HEALTH_INTERVAL_MS: '0',
    COPYTRADE_BROKER_TIMEOUT_MS: '2000',
    // The demo's bridge account is made after the seed, not by it (test/demo/bridge-demo.test.ts covers it).
    COPYTRADE_DEMO_BRIDGE: '0',
  };
  const cfg = loadConfig({ dataDir, port: '0', demo: true }, env);
  const steps: string[] = [];
  await expect(
    startService(cfg, false, {
      seedHooks: {
        afterStep: (s) => {
          steps.push(s);
          if (s === stopAt) throw new Error(`killed after ${s}`);
        },
      },
    }),
  ).rejects.toThrow(`killed after ${stopAt}`);
  expect(existsSync(join(dataDir, 'demo-credentials.json'))).toBe(false);
  const svc = await startService(cfg, false);
  return { svc, dataDir, steps };
}

describe.each(stores)('demo seeding killed part-way ($name)', ({ url, stops }) => {
  it.each(stops)(
    'completes the demo, unduplicated, after a stop at %s',
    async (stopAt) => {
      const { svc, dataDir, steps } = await interruptedThenRestarted(await url(), stopAt);
      try {
        expect(steps.at(-1)).toBe(stopAt);
        const specs = demoSpecs(true);
        const user = (await svc.store.users.byEmail(DEMO_EMAIL))!;
        const accounts = await svc.store.accounts.list(user.id);
        expect(accounts).toHaveLength(specs.length);
        expect(new Set(accounts.map((a) => a.name)).size).toBe(specs.length);
        expect((await svc.store.accounts.listGroups(user.id)).map((g) => g.name).sort()).toEqual([
          'Demo group',
          'MetaTrader master group',
        ]);
        // Every Slave has its rule, also the one whose rule step the kill cut off.
        const slaves = accounts.filter((a) => a.role === 'slave');
        expect((await svc.store.accounts.rulesFor(slaves.map((a) => a.id))).size).toBe(slaves.length);
        // At the simulator: one account per demo key, none made twice by the second run.
        const keys = svc.broker
          .accounts()
          .map((a) => a.meta.demoKey)
          .filter(Boolean);
        expect(keys.sort()).toEqual([...specs.map((s) => s.key), ...SPARE_KEYS].sort()); // the spares are never connected
        // The credentials file is whole and its password is the one the user was created with.
        const creds = JSON.parse(readFileSync(join(dataDir, 'demo-credentials.json'), 'utf8'));
        expect(svc.demo).toMatchObject({ email: DEMO_EMAIL, password: creds.password });
        await expect(svc.deps.auth.signIn(DEMO_EMAIL, creds.password)).resolves.toMatchObject({ userId: user.id });
        expect(existsSync(join(dataDir, 'demo-seed.json'))).toBe(false);
        const res = await fetch(`${svc.v1BaseUrl}/v1/accounts`, {
          headers: { authorization: `Bearer ${creds.apiKey}` },
        });
        expect(res.status).toBe(200);
      } finally {
        await svc.close();
      }
    },
    120_000,
  );
});
