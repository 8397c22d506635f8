import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.js';
import { holdServeLease, refuseBesideServe, SERVE_LEASE } from '../../src/roles/serve-lease.js';
import type { Store } from '../../src/store/store.js';
import { requirePostgres } from '../helpers/postgres.js';
import { twoStores } from '../helpers/two-stores.js';

const available = await requirePostgres();
const noop = () => undefined;

/** Waits on a condition, bounded. */
async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

// Two Store objects on one fresh database stand for two processes: `serve` is every Master's copier with no
// per-account lease, so a second copier of any kind on its database would copy the same Masters twice.
describe.runIf(available)('one `serve` per PostgreSQL database, never beside workers', () => {
  let a: Store;
  let b: Store;
  let close: () => Promise<void>;
  beforeEach(async () => {
    ({ a, b, close } = await twoStores());
  });
  afterEach(async () => close());

  it('a second serve and a worker are refused while one serve runs, and start once it stopped', async () => {
    const release = await holdServeLease(a.leases, 'serve-1', { onLost: noop });
    const second = await holdServeLease(b.leases, 'serve-2', { onLost: noop }).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(AppError);
    expect((second as AppError).code).toBe('conflict');
    expect((second as Error).message).toContain('another `copytrade serve` runs on this database');
    expect((second as Error).message).toContain('serve-1');
    await expect(refuseBesideServe(b.leases)).rejects.toThrow(/a `copytrade serve` process runs on this database/);

    await release();
    await expect(refuseBesideServe(b.leases)).resolves.toBeUndefined();
    const now = await holdServeLease(b.leases, 'serve-2', { onLost: noop });
    await now();
  });

  it('a serve is refused while a worker holds any lease, and takes nothing', async () => {
    await b.leases.acquire('account:acc_x', 'worker-1', 60_000);
    const refused = await holdServeLease(a.leases, 'serve-1', { onLost: noop }).catch((e: unknown) => e);
    expect((refused as Error).message).toMatch(
      /`copytrade worker` processes run on this database: account:acc_x \(held by worker-1/,
    );
    // Its own lease was given back at once: the worker is not then refused because of a serve that never started.
    await expect(refuseBesideServe(b.leases)).resolves.toBeUndefined();
  });

  it('a serve whose lease was taken while it was paused is told so at its next renewal', async () => {
    let lost = 0;
    const release = await holdServeLease(a.leases, 'serve-1', { onLost: () => lost++, ttlMs: 600 });
    // What a successor does once the paused holder's lease expired: the row changes owner and epoch.
    await b.database.db.execute(
      sql`update leases set owner = 'worker-1', epoch = epoch + 1, expires_at = now() + interval '1 minute' where key = ${SERVE_LEASE}`,
    );
    await until(() => lost === 1);
    await release();
    expect(lost).toBe(1);
    expect((await b.leases.get(SERVE_LEASE))?.owner).toBe('worker-1');
  });
});
