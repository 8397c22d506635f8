import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Store } from '../../src/store/store.js';
import { rowsOf } from '../../src/store/rows-of.js';
import { runCli } from '../helpers/cli-run.js';
import { startTestService } from '../helpers/service.js';

let dir: string;
let account: string;

/** One statement on the store (the service is stopped: the embedded store is this test's alone). */
async function onStore<T>(q: ReturnType<typeof sql>): Promise<T[]> {
  const store = await Store.open({ dataDir: dir, embeddedFsync: false });
  try {
    return rowsOf<T>(await store.database.db.execute(q));
  } finally {
    await store.close();
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ct-receipts-'));
  const svc = await startTestService({ dataDir: dir });
  try {
    const key = svc.demo!.apiKey;
    const accounts = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts as Array<{
      id: string;
      role: string;
      platform: string;
    }>;
    const master = accounts.find((a) => a.role === 'master' && a.platform === 'sim')!;
    for (const volume of [0.1, 0.2]) {
      const r = await svc.call('POST', `/v1/accounts/${master.id}/orders`, {
        token: key,
        body: { symbol: 'EURUSD', side: 'buy', volume },
      });
      expect(r.status).toBe(202);
    }
    await vi.waitFor(
      async () => {
        if ((await svc.sealer.runOnce(0)) === 0) throw new Error('nothing sealed');
        const [n] = rowsOf<{ n: number }>(
          await svc.store.database.db.execute(
            sql`select count(*)::int as n from copy_intents i where not exists (select 1 from receipts r where r.intent_id = i.id)`,
          ),
        );
        if (n!.n > 0) throw new Error('rows left to seal');
      },
      { timeout: 20_000, interval: 50 },
    );
    const [top] = rowsOf<{ account_id: string }>(
      await svc.store.database.db.execute(
        sql`select account_id from receipts group by account_id order by count(*) desc, account_id limit 1`,
      ),
    );
    account = top!.account_id;
  } finally {
    await svc.close();
  }
}, 90_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('copytrade verify and receipts export', () => {
  it('export checks with the public key alone; verify passes, then names the receipt after an edit', async () => {
    const exp = await runCli(['receipts', 'export', account, '--data-dir', dir, '--html', '--out', dir, '--json']);
    expect(exp.stderr).toBe('');
    const files = JSON.parse(exp.stdout).files as string[];
    expect(readFileSync(files[1]!, 'utf8')).toContain('Signed day heads');
    const pem = JSON.parse(readFileSync(files[0]!, 'utf8')).publicKeys[0].pem as string;
    expect(readFileSync(join(dir, 'receipt.key'), 'utf8')).toContain('PRIVATE KEY');
    const script = join(process.cwd(), 'scripts', 'verify-receipts.mjs');
    expect(execFileSync(process.execPath, [script, files[0]!], { encoding: 'utf8' })).toMatch(/^OK /);
    expect(pem).toContain('PUBLIC KEY');

    const ok = await runCli(['verify', '--data-dir', dir]);
    expect(ok.stdout).toContain('verify: OK');
    expect(ok.code).toBe(0);

    const [r] = await onStore<{ id: string; intent_id: string }>(
      sql`select id, intent_id from receipts where account_id = ${account} and seq = 1`,
    );
    await onStore(
      sql`update trades set volume = volume * 2 where id = (select trade_id from copy_intents where id = ${r!.intent_id})`,
    );
    const bad = await runCli(['verify', '--data-dir', dir, '--account', account]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(
      `FAIL ${account}: receipt #1 (${r!.id}): its ledger row ${r!.intent_id} no longer matches it (master.volume differs)`,
    );
  }, 60_000);

  it('refuses a verify whose key file is missing, writing nothing', async () => {
    const missing = join(dir, 'elsewhere', 'receipt.key');
    const r = await runCli(['verify', '--data-dir', dir, '--receipt-key-file', missing]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the receipt key file ${missing} does not exist`);
    expect(existsSync(missing)).toBe(false);
  }, 30_000);
});
