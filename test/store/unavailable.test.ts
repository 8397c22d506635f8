import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.js';
import { guardedPg } from '../../src/store/pg-guard.js';
import { isConnectionError, isStoreUnavailable, unavailableReason } from '../../src/store/unavailable.js';
import { freePort } from '../helpers/free-port.js';
import { PG_ADMIN_URL, postgresReachable, tempDatabase } from '../helpers/postgres.js';

const pgUp = await postgresReachable();

const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('which driver errors mean the store cannot be reached', () => {
  it.each([
    ['ECONNREFUSED', pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['ECONNRESET', pgError('ECONNRESET', 'read ECONNRESET')],
    ['57P01 admin_shutdown', pgError('57P01', 'terminating connection due to administrator command')],
    ['57P03 cannot_connect_now', pgError('57P03', 'the database system is starting up')],
    ['08006 connection_failure', pgError('08006')],
    ['08P01 protocol_violation', pgError('08P01')],
    ['53300 too_many_connections', pgError('53300')],
    ['Connection terminated unexpectedly', new Error('Connection terminated unexpectedly')],
    ['the pool timing out', new Error('timeout exceeded when trying to connect')],
    ['a connect timeout', new Error('Connection terminated due to connection timeout')],
    ['a broken client', new Error('Client has encountered a connection error and is not queryable')],
    ['wrapped by the query builder', new Error('Failed query: select 1', { cause: pgError('57P01') })],
    ['an AggregateError of two addresses', new AggregateError([pgError('ECONNREFUSED'), pgError('ECONNREFUSED')], '')],
  ])('%s is a connection error', (_name, err) => {
    expect(isConnectionError(err)).toBe(true);
  });

  it.each([
    ['unique violation', pgError('23505', 'duplicate key value violates unique constraint')],
    ['syntax error', pgError('42601')],
    ['a refused password', pgError('28P01', 'password authentication failed for user "x"')],
    ['a database that does not exist', pgError('3D000', 'database "x" does not exist')],
    ['a serialisation failure', pgError('40001')],
    ['a lock not available', pgError('55P03')],
    ['a plain error', new Error('boom')],
    ['not an error', 'ECONNREFUSED'],
  ])('%s is not', (_name, err) => {
    expect(isConnectionError(err)).toBe(false);
  });

  it('isStoreUnavailable asks for the marked error only, also when wrapped', () => {
    const marked = new AppError('store_unavailable', 'x', { cause: pgError('57P01') });
    expect(isStoreUnavailable(marked)).toBe(true);
    expect(isStoreUnavailable(new Error('Failed query', { cause: marked }))).toBe(true);
    // A broker's socket error never passed the store's guard: it is not the store's.
    expect(isStoreUnavailable(new TypeError('fetch failed', { cause: pgError('ECONNREFUSED') }))).toBe(false);
    expect(unavailableReason(new Error('Failed query', { cause: marked }))).toBe('57P01');
    expect(
      unavailableReason(
        new AppError('store_unavailable', 'x', { cause: new Error('Connection terminated unexpectedly') }),
      ),
    ).toBe('Connection terminated unexpectedly');
  });
});

/** The guard on the real driver: what node-postgres hands out for each way a server goes away. */
describe('guardedPg on the real driver', () => {
  const { Pool } = guardedPg(pg);
  const closers: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  });

  it('nothing listening: a connect, a query and a pool query are store_unavailable', async () => {
    const pool = new Pool({ connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/x`, max: 1 });
    closers.push(() => pool.end());
    pool.on('error', () => undefined);
    const errs = await Promise.all([
      pool.connect().then(
        () => null,
        (e: unknown) => e,
      ),
      pool.query('select 1').then(
        () => null,
        (e: unknown) => e,
      ),
    ]);
    for (const e of errs) {
      expect(e).toBeInstanceOf(AppError);
      expect(e).toMatchObject({ code: 'store_unavailable', retryAfter: expect.any(Number) });
      expect(unavailableReason(e)).toBe('ECONNREFUSED');
      // Marked once, not once per layer.
      expect((e as AppError).cause).not.toBeInstanceOf(AppError);
    }
  });

  it('a server that accepts and never answers: the connect timeout is store_unavailable', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((s) => {
      sockets.push(s);
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    closers.push(
      () =>
        new Promise((r) => {
          for (const s of sockets) s.destroy();
          silent.close(r);
        }),
    );
    const port = (silent.address() as AddressInfo).port;
    const pool = new Pool({
      connectionString: `postgres://postgres@127.0.0.1:${port}/x`,
      connectionTimeoutMillis: 300,
    });
    closers.push(() => pool.end());
    pool.on('error', () => undefined);
    const err = await pool.query('select 1').then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'store_unavailable' });
  });

  it.runIf(pgUp)(
    'a session the server ends (57P01, as a restart does) mid-query is store_unavailable; a refused statement is not',
    async () => {
      const db = await tempDatabase();
      closers.push(db.drop);
      const pool = new Pool({ connectionString: db.url, max: 2 });
      closers.push(() => pool.end());
      pool.on('error', () => undefined);
      pool.on('connect', (c) => c.on('error', () => undefined));
      const client = await pool.connect();
      client.on('error', () => undefined);
      const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      const sleeping = client.query('select pg_sleep(30)').then(
        () => null,
        (e: unknown) => e,
      );
      const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
      await admin.connect();
      try {
        // Wait on the condition (the sleep is running), then end that session as a server stop does.
        for (let i = 0; i < 200; i++) {
          const r = await admin.query("select 1 from pg_stat_activity where pid = $1 and query like '%pg_sleep%'", [
            pid,
          ]);
          if (r.rowCount) break;
          await new Promise((res) => setTimeout(res, 25));
        }
        await admin.query('select pg_terminate_backend($1)', [pid]);
      } finally {
        await admin.end();
      }
      const err = await sleeping;
      client.release(true);
      expect(err).toMatchObject({ code: 'store_unavailable' });
      expect(unavailableReason(err)).toBe('57P01');
      const refused = await pool.query('select * from no_such_table').then(
        () => null,
        (e: unknown) => e,
      );
      expect(refused).toMatchObject({ code: '42P01' });
      expect(refused).not.toBeInstanceOf(AppError);
    },
  );
  it.runIf(pgUp)(
    'a checked-out client whose session is lost goes back to the pool at once: a holder that never releases it leaks nothing',
    async () => {
      const db = await tempDatabase();
      closers.push(db.drop);
      const pool = new Pool({ connectionString: db.url, max: 1 });
      closers.push(() => pool.end());
      pool.on('error', () => undefined);
      pool.on('connect', (c) => c.on('error', () => undefined));
      const client = await pool.connect();
      const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
      await admin.connect();
      await admin.query('select pg_terminate_backend($1)', [pid]);
      await admin.end();
      // What drizzle's transaction does: BEGIN on the held client, which fails; its release is never reached.
      const begin = await client.query('begin').then(
        () => null,
        (e: unknown) => e,
      );
      expect(begin).toMatchObject({ code: 'store_unavailable' });
      // The pool's one connection is free again: this query gets a new session instead of waiting forever.
      expect((await pool.query<{ one: number }>('select 1 as one')).rows).toEqual([{ one: 1 }]);
      // A late release by the holder is harmless.
      expect(() => client.release()).not.toThrow();
    },
  );
});
