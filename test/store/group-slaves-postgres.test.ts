import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Store } from '../../src/store/store.js';
import { dec } from '../../src/domain/decimal.js';
import { withDefaults } from '../../src/domain/copy-rule.js';
import { initialHealth } from '../../src/domain/account.js';
import { seedAccounts } from '../helpers/store-seed.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';
import { getTableColumns } from 'drizzle-orm';
import { accounts } from '../../src/store/schema.js';

const pgAvailable = await requirePostgres();

/**
 * The PostgreSQL store holds each group's Slaves between copies (issue 12) while other processes write them: every
 * answer of one Store must follow every kind of change another Store (another process) commits.
 */
describe.runIf(pgAvailable)("a group's Slaves on PostgreSQL, written by another process", () => {
  let reader: Store;
  let writer: Store;
  let drop: () => Promise<void>;
  const seen: string[] = [];
  /** The reader's last statement and its parameters. */
  let last: [string, unknown[]] = ['', []];
  beforeAll(async () => {
    const db = await tempDatabase();
    drop = db.drop;
    reader = await Store.open({
      dataDir: ':unused:',
      databaseUrl: db.url,
      onStatement: (q, params) => {
        seen.push(q);
        last = [q, params];
      },
    });
    writer = await Store.open({ dataDir: ':unused:', databaseUrl: db.url, migrate: false });
  }, 120_000);
  afterAll(async () => {
    await reader?.close();
    await writer?.close();
    await drop?.();
  });

  /**
   * One group of `n` Slaves written by the writer, the last two with a rule. `current` is what a read that holds
   * nothing returns (the writer's list with the rules); `read` is the reader's answer, asserted to be one statement.
   */
  const group = async (key: string, n: number) => {
    const { userId, master, slaves } = await seedAccounts(writer, key, n);
    const w = writer.accounts;
    const g = await w.createGroup(userId, key);
    await w.setRoleAndGroup(master.id, 'master', g.id);
    for (const s of slaves) await w.setRoleAndGroup(s.id, 'slave', g.id);
    for (const s of slaves.slice(-2)) await w.setRule(s.id, withDefaults({ reverse: true }));
    const current = async () => {
      const list = (await w.list(userId, { groupId: g.id })).filter((a) => a.role === 'slave');
      const rules = await w.rulesFor(list.map((a) => a.id));
      return list.map((account) => ({ account, rule: rules.get(account.id) ?? withDefaults(undefined) }));
    };
    const read = async () => {
      seen.length = 0;
      const got = await reader.accounts.slavesOfGroup(userId, g.id);
      expect(seen).toHaveLength(1);
      return got;
    };
    return { userId, groupId: g.id, masterId: master.id, ids: slaves.map((s) => s.id), current, read };
  };

  it('answers from the rows it holds until a change commits, then with the change', async () => {
    const { userId, groupId, ids, current, read } = await group('gs', 4);
    const w = writer.accounts;
    const [s1, s2, s3, s4] = ids as [string, string, string, string];

    const first = await read();
    expect(first).toEqual(await current());
    expect(first.map((s) => s.account.id)).toEqual([s1, s2, s3, s4]);
    // Nothing changed: the same objects, not rows read and mapped again.
    const again = await read();
    expect(again).toEqual(first);
    for (const [i, s] of again.entries()) expect(s.account).toBe(first[i]!.account);

    const changes: Array<[string, () => Promise<unknown>]> = [
      ['balance and equity', () => w.setFunds(s1, dec('1234.5'), dec('1200'))],
      ['a health round', () => w.applyHealth([{ id: s2, health: { ...initialHealth(), inSync: false }, funds: null }])],
      ['a rule stored', () => w.setRule(s2, withDefaults({ reverse: true }))],
      ['a rule changed', () => w.setRule(s2, withDefaults({ reverse: false, copyStopLoss: false }))],
      ['a pause', () => w.setStatus(s3, 'paused', 'by user')],
      ['a Slave made Master', () => w.setRoleAndGroup(s4, 'master', groupId)],
      ['a Slave back', () => w.setRoleAndGroup(s4, 'slave', groupId)],
      ['a Slave leaving the group', () => w.setRoleAndGroup(s3, 'slave', null)],
      ['a Slave removed', () => w.remove(s2)],
      [
        'a Slave added',
        () =>
          w.create({
            userId,
            platform: 'sim',
            role: 'slave',
            name: 'new',
            groupId,
            brokerAccountId: 'gs-new',
            brokerAccountNumber: '99',
          }),
      ],
      ['the group deleted', () => w.deleteGroup(userId, groupId)],
    ];
    let before = again;
    for (const [what, change] of changes) {
      await change();
      const expected = await current();
      const got = await read();
      expect(got, what).toEqual(expected);
      expect(got, what).not.toEqual(before);
      before = got;
    }
    expect(before).toEqual([]);
  }, 60_000);

  it('hands its group out as held, with the settled version the record is guarded by, only while its read is recent', async () => {
    const { userId, groupId, read } = await group('recent', 2);
    expect(reader.accounts.recentSlavesOfGroup(userId, groupId, 60_000)).toBeNull();
    const got = await read();
    const t = performance.now();
    const { rows } = await writer.database.pool!.query(
      'select settled::text as s from group_slaves_version where group_id = $1',
      [groupId],
    );
    const clock = vi.spyOn(performance, 'now');
    try {
      clock.mockReturnValue(t + 500);
      const held = reader.accounts.recentSlavesOfGroup(userId, groupId, 1000);
      expect(held?.slaves).toEqual(got);
      for (const [i, s] of held!.slaves.entries()) expect(s.account).toBe(got[i]!.account);
      expect(held?.settled).toBe((rows[0] as { s: string }).s);
      clock.mockReturnValue(t + 1500);
      expect(reader.accounts.recentSlavesOfGroup(userId, groupId, 1000)).toBeNull();
    } finally {
      clock.mockRestore();
    }
    // A read confirms it again, even when nothing changed.
    await read();
    expect(reader.accounts.recentSlavesOfGroup(userId, groupId, 1000)?.slaves).toEqual(got);
  });

  it('after a health round, answers with the new health and funds and keeps every object that did not move', async () => {
    const { ids, current, read } = await group('hr', 5);
    const [s1, s2, s3, s4, s5] = ids as [string, string, string, string, string];
    const first = await read();
    expect(first).toEqual(await current());

    // What a running service's monitor writes every round: health (its checkedAt at least) and funds.
    const checked = { ...initialHealth(), checkedAt: new Date().toISOString() };
    await writer.accounts.applyHealth([
      { id: s2, health: { ...checked, tradingAllowed: false, state: 'degraded' }, funds: null },
      { id: s3, health: checked, funds: { balance: dec('5000'), equity: dec('4870.25') } },
      { id: s4, health: initialHealth(), funds: null },
    ]);
    const second = await read();
    expect(second).toEqual(await current());
    expect(second[1]!.account.health.tradingAllowed).toBe(false);
    expect(second[2]!.account.equity?.toString()).toBe('4870.25');
    // Only the accounts whose round columns moved are new objects (s4's health is as it was, but its updated_at
    // moved); every rule is the one held: the answer came from the round columns, not a read of every column.
    for (const i of [0, 4]) expect(second[i]!.account, ids[i]).toBe(first[i]!.account);
    for (const i of [1, 2, 3]) expect(second[i]!.account, ids[i]).not.toBe(first[i]!.account);
    for (const i of [0, 1, 2, 3, 4]) expect(second[i]!.rule).toBe(first[i]!.rule);

    // A settled column after a round column: the whole rows again, right.
    await writer.accounts.applyHealth([{ id: s5, health: checked, funds: null }]);
    await writer.accounts.setStatus(s1, 'paused', 'by user');
    const third = await read();
    expect(third).toEqual(await current());
    expect(third[0]!.account.status).toBe('paused');
    // And nothing moved: the same objects.
    const fourth = await read();
    for (const [i, s] of fourth.entries()) expect(s.account).toBe(third[i]!.account);
  }, 60_000);

  it('follows a Slave deleted and inserted again with other values, and a rev written back by hand', async () => {
    const { ids, current, read } = await group('reins', 3);
    const pool = writer.database.pool!;
    const before = await read();
    expect(before).toEqual(await current());
    // Raw SQL, as an operator's repair or a partial restore would: the row comes back with another status and
    // name, and with the rev it had (a rev that only counted up from the row's own would be the one held).
    const client = await pool.connect();
    try {
      await client.query('begin');
      const { rows } = await client.query('delete from accounts where id = $1 returning *', [ids[0]]);
      const row = rows[0] as Record<string, unknown>;
      const cols = Object.keys(row);
      const values = cols.map((c) => (c === 'status' ? 'paused' : c === 'name' ? 'REINSERTED' : row[c]));
      await client.query(
        `insert into accounts (${cols.join(', ')}) values (${cols.map((_, i) => `$${i + 1}`).join(', ')})`,
        values,
      );
      await client.query('update accounts set rev = $2 where id = $1', [ids[0], row.rev]);
      await client.query('commit');
    } finally {
      client.release();
    }
    const got = await read();
    expect(got.find((s) => s.account.id === ids[0])?.account).toMatchObject({ status: 'paused', name: 'REINSERTED' });
    expect(got).toEqual(await current());

    // A status changed, then the rev put back to what it was before the change.
    const { rows } = await pool.query('select rev from accounts where id = $1', [ids[1]]);
    await pool.query(`update accounts set status = 'disabled' where id = $1`, [ids[1]]);
    await pool.query('update accounts set rev = $2 where id = $1', [ids[1], rows[0].rev]);
    const again = await read();
    expect(again.find((s) => s.account.id === ids[1])?.account.status).toBe('disabled');
    expect(again).toEqual(await current());
  });

  it('follows a change of any column of an account row (the digests cover every column an Account has)', async () => {
    const columns = Object.entries(getTableColumns(accounts)).filter(([k]) => k !== 'credentialsEnc' && k !== 'rev');
    const { ids, current, read } = await group('col', columns.length);
    const other = await writer.users.create('col-other@example.test', 'x');
    const otherGroup = await writer.accounts.createGroup(other.id, 'other');
    const pool = writer.database.pool!;
    let before = await read();
    expect(before).toEqual(await current());
    for (const [i, [key, col]] of columns.entries()) {
      const name = col.name;
      const type = col.getSQLType();
      const to =
        key === 'userId'
          ? `'${other.id}'`
          : key === 'groupId'
            ? `'${otherGroup.id}'`
            : type === 'jsonb'
              ? `jsonb_set(${name}, '{lastError}', '"changed"')`
              : type === 'numeric'
                ? `coalesce(${name}, 0) + 1`
                : type.startsWith('timestamp')
                  ? `coalesce(${name}, now()) + interval '1 second'`
                  : `coalesce(${name}, '') || 'x'`;
      const res = await pool.query(`update accounts set ${name} = ${to} where id = $1`, [ids[i]]);
      expect(res.rowCount, name).toBe(1);
      const got = await read();
      expect(got, name).toEqual(await current());
      expect(got, name).not.toEqual(before);
      before = got;
    }
  }, 60_000);

  it("answers an unchanged group from its version alone: the Slaves' rows are read again only after a write of theirs", async () => {
    const { masterId, ids, current, read } = await group('ver', 3);
    const pool = writer.database.pool!;
    /** How often the reader's last statement, run again as it was sent, scans a table (EXPLAIN ANALYZE). */
    const scans = async (table: string) => {
      const [q, params] = last;
      const { rows } = await pool.query(`explain (analyze, format json) ${q}`, params);
      type Node = { 'Relation Name'?: string; 'Actual Loops': number; Plans?: Node[] };
      let loops = 0;
      const walk = (n: Node) => {
        if (n['Relation Name'] === table) loops += n['Actual Loops'];
        for (const c of n.Plans ?? []) walk(c);
      };
      walk((rows[0] as { 'QUERY PLAN': Array<{ Plan: Node }> })['QUERY PLAN'][0]!.Plan);
      return loops;
    };
    const accountScans = () => scans('accounts');
    // Only the digests join the rules: a read that computes them scans copy_rules.
    const digests = async () => (await scans('copy_rules')) > 0;
    await read();
    const held = await read();
    expect(await accountScans()).toBe(0);

    // A health round of the Master, not of a Slave: the group's version stays.
    await writer.accounts.applyHealth([{ id: masterId, health: { ...initialHealth(), inSync: false }, funds: null }]);
    const after = await read();
    expect(await accountScans()).toBe(0);
    for (const [i, s] of after.entries()) expect(s.account).toBe(held[i]!.account);

    // A Slave's health round moves `version`, not `settled`: that read fetches the moved row without the digests of
    // every row and rule; the next reads nothing.
    await writer.accounts.applyHealth([
      {
        id: ids[1]!,
        health: { ...initialHealth(), inSync: false },
        funds: { balance: dec('900'), equity: dec('880') },
      },
    ]);
    const moved = await read();
    expect(await accountScans()).toBeGreaterThan(0);
    expect(await digests()).toBe(false);
    expect(moved).toEqual(await current());
    expect(moved[1]!.account.health.inSync).toBe(false);
    expect(moved[1]!.account.equity?.toString()).toBe('880');
    for (const i of [0, 2]) expect(moved[i]!.account).toBe(held[i]!.account);
    await read();
    expect(await accountScans()).toBe(0);

    // More than a round's columns (a pause): the digests, then nothing again.
    await writer.accounts.setStatus(ids[0]!, 'paused', 'by user');
    const paused = await read();
    expect(await digests()).toBe(true);
    expect(paused).toEqual(await current());
    expect(paused[0]!.account.status).toBe('paused');
    await read();
    expect(await accountScans()).toBe(0);
    // A rule written: the same.
    await writer.accounts.setRule(ids[2]!, withDefaults({ reverse: true }));
    const ruled = await read();
    expect(await digests()).toBe(true);
    expect(ruled).toEqual(await current());
    expect(ruled[2]!.rule.reverse).toBe(true);

    // A write that changes no value still moves the version (and the row's xmin): the read after it finds the same
    // values, and the one after that holds the new version.
    await pool.query('update accounts set name = name where id = $1', [ids[2]]);
    const same = await read();
    expect(await accountScans()).toBeGreaterThan(0);
    expect(same).toEqual(ruled);
    for (const i of [0, 1]) expect(same[i]!.account).toBe(ruled[i]!.account);
    await read();
    expect(await accountScans()).toBe(0);
  });

  it('a Slave removed while a health slice of its group waits for it: both commit (no deadlock on the version row)', async () => {
    const { ids } = await group('dl', 3);
    const x = ids[2]!; // has a rule: its delete moves the group's version row
    const pool = writer.database.pool!;
    await pool.query('insert into equity_snapshots (account_id, at, balance, equity) values ($1, now(), 1, 1)', [x]);
    const lockWaiters = async (n: number) => {
      for (let i = 0; i < 2000; i++) {
        const { rows } = await pool.query(
          `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
        );
        if ((rows[0] as { n: number }).n >= n) return;
        await new Promise((r) => setTimeout(r, 5));
      }
      throw new Error(`never ${n} waiting for a lock`);
    };
    // The removal's transaction stops at its last delete (equity history), held by another transaction, with what it
    // wrote before locked; a health slice of the group then waits for it; then the removal goes on.
    const blocker = await pool.connect();
    try {
      await blocker.query('begin');
      await blocker.query('select 1 from equity_snapshots where account_id = $1 for update', [x]);
      const removal = writer.accounts.remove(x);
      await lockWaiters(1);
      const slice = writer.accounts.applyHealth(
        ids.map((id) => ({ id, health: { ...initialHealth(), checkedAt: new Date().toISOString() }, funds: null })),
      );
      await lockWaiters(2);
      await blocker.query('commit');
      const settled = await Promise.allSettled([removal, slice]);
      expect(settled.map((r) => (r.status === 'rejected' ? String(r.reason) : r.status))).toEqual([
        'fulfilled',
        'fulfilled',
      ]);
    } finally {
      blocker.release();
    }
    const { rows } = await pool.query('select removed_at is not null as removed from accounts where id = $1', [x]);
    expect((rows[0] as { removed: boolean }).removed).toBe(true);
  });
});
