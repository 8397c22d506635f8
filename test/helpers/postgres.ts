import pg from 'pg';
import { randomBytes } from 'node:crypto';

/** Admin URL of the PostgreSQL server the PostgreSQL-path tests use (trust auth on loopback by default). */
export const PG_ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export async function postgresReachable(): Promise<boolean> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 1500 });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}

/**
 * In CI the PostgreSQL path must run: an unreachable server is a failure there, not a skip. Outside CI a
 * developer without PostgreSQL still gets a green embedded run, and the reason is printed.
 */
export async function requirePostgres(): Promise<boolean> {
  const ok = await postgresReachable();
  if (!ok && process.env.CI)
    throw new Error(`PostgreSQL is not reachable at ${PG_ADMIN_URL}, and CI requires the PostgreSQL path`);
  if (!ok) console.warn(`PostgreSQL not reachable at ${PG_ADMIN_URL}: PostgreSQL-path tests skipped (they run in CI)`);
  return ok;
}

/** A throwaway database on the server; drop() removes it. */
export async function tempDatabase(adminUrl = PG_ADMIN_URL): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `copytrade_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
