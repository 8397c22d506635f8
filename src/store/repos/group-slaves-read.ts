import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db.js';
import { accounts, copyRules } from '../schema.js';
import { decOrNull } from '../../domain/decimal.js';
import type { Health } from '../../domain/types.js';
import { withDefaults, type CopyRule } from '../../domain/copy-rule.js';
import { accountColumns, createdAtKey, epochMs, live, toAccount } from './account-row.js';
import { GroupSlavesCache, type GroupSlave } from './group-slaves-cache.js';
import { pgArray } from '../pg-array.js';

interface Held {
  /** The group's row in group_slaves_version as read (migration 0014); '0' when it has none yet. */
  version: string;
  /** Its `settled` version: moved by writes of more than a health round's columns. */
  settled: string;
  /** Digest of the group's Slaves, their rows' `rev` and their rules' row versions. */
  digest: string;
  /** Digest of their account rows' versions (xmin). */
  versions: string;
  slaves: GroupSlave[];
  /** Each Slave's account row version (xmin) as read, in the order of `slaves`. */
  xmins: string[];
  /**
   * The distinct values of `xmins` (a health slice writes its hundred rows in one transaction), as the array
   * literal the statement is sent: made when they change, not serialized again by the driver on every copy.
   */
  seen: string;
  /** When a statement last confirmed all of it (performance.now()): how old the health and funds held may be. */
  readAt: number;
}

/** A group's Slaves as held, for a copy that plans on them and records only if `settled` is still the group's. */
export interface HeldGroupSlaves {
  slaves: GroupSlave[];
  /** The group's `settled` version as read: the record's guard (`settledGuard`). */
  settled: string;
}

/**
 * True while the group's `settled` version is the one given (as `HeldGroupSlaves` holds it): no write but a health
 * round's has touched its Slaves' rows or rules since. The same expression as the read's, so the texts compare.
 */
export function settledGuard(groupId: string, settled: string): SQL {
  return sql`coalesce((select "settled" from "group_slaves_version" where "group_id" = ${groupId}), 0)::text = ${settled}`;
}

/** id, xmin, health, balance, equity, updated_at (epoch ms): one Slave whose account row moved. */
type RoundRow = [string, string, Health, string | null, string | null, number];

/**
 * A group's Slaves on PostgreSQL, which other processes write too, held between copies. Every read sends what it
 * holds with one statement, which answers with nothing when nothing changed, with the health and funds of the
 * accounts a health round rewrote when only those changed, and with every column of every Slave when anything
 * else did. What it compares comes from the statement's one snapshot, so an answer from what is held is as
 * current as a read would have been.
 *
 * First the group's versions (group_slaves_version, moved by triggers whoever writes): `version` on every write of
 * its Slaves' rows and rules, `settled` on those that change more than a health round's columns. When `version` is
 * the one held, the statement stops there, one row read by its key. When only `version` moved (a health round),
 * only the rows whose xmin is not among those held are sent. Only when `settled` moved are the digests below
 * computed, hashing every Slave's row and rule (1000 Slaves: 3-7 ms a copy). Versions moved by a write that
 * changed nothing the digests see (a row rewritten as it was) are taken as the new ones held.
 *
 * Two versions per account, because a running service's health monitor rewrites every live account once a round
 * (health's `checkedAt`, funds that move with prices): with the row's xmin alone, a 1000-Slave group's held rows
 * were thrown away after every health slice (every ~1.5 s) and read again whole (~25 ms). `rev` moves only when a
 * column other than health, funds and updated_at changes (a trigger, whoever writes); xmin moves on any write.
 */
export class GroupSlavesReader {
  private readonly held = new GroupSlavesCache<Held>();
  private query: ReturnType<GroupSlavesReader['prepare']> | null = null;

  constructor(private readonly db: Db) {}

  async read(userId: string, groupId: string): Promise<GroupSlave[]> {
    const key = `${userId}\u0000${groupId}`;
    const held = this.held.get(key);
    this.query ??= this.prepare();
    const rows = await this.query.execute({
      userId,
      groupId,
      version: held?.version ?? null,
      settled: held?.settled ?? null,
      digest: held?.digest ?? null,
      versions: held?.versions ?? null,
      seen: held?.seen ?? '{}',
    });
    const { version, settled, digest, versions } = rows[0]!.d;
    const readAt = performance.now();
    if (held && version === held.version) {
      held.readAt = readAt;
      return held.slaves.slice();
    }
    // Only a health round's columns moved: the digests were not computed, and the ones held stay (a `versions` held
    // that is stale only sends a later read down the round's path, which finds the moved rows by their xmin).
    const roundOnly = held && settled === held.settled;
    if (held && (roundOnly || digest === held.digest)) {
      if (!roundOnly && versions === held.versions) {
        this.held.set(key, { ...held, version, settled, readAt });
        return held.slaves.slice();
      }
      const text = rows[0]!.v?.round;
      // No moved row although a version moved: no commit makes that (a version held is a commit before the read),
      // only a collision of hash sums or a reused xmin; read it all rather than trust what is held.
      const fresh = text ? refreshed(held, JSON.parse(text) as RoundRow[]) : null;
      if (fresh) {
        this.held.set(
          key,
          roundOnly
            ? { ...fresh, version, settled, digest: held.digest, versions: held.versions, readAt }
            : { ...fresh, version, settled, digest, versions, readAt },
        );
        return fresh.slaves.slice();
      }
      // The same digest over other accounts, or no moved row: a collision of 64-bit hash sums. Read it all.
      this.held.drop(key);
      return this.read(userId, groupId);
    }
    const read = rows.flatMap((r) => (r.s ? [r.s] : []));
    // `list`'s order (created_at, then id), sorted here: the server's sort of 1000 rows that carry their rules took
    // 3-10 ms (EXPLAIN ANALYZE at load 7; the same sort without the rule column 0.4 ms), this one well under 1 ms.
    // The key keeps created_at's microseconds (a Date has milliseconds); ids are ASCII, so code-unit order is the
    // database's text order for them.
    read.sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
    const slaves = read.map((r) => ({
      account: toAccount(r),
      rule: withDefaults((r.rule ?? undefined) as Partial<CopyRule> | undefined),
    }));
    const xmins = read.map((r) => r.xmin);
    this.held.set(key, { version, settled, digest, versions, slaves, xmins, seen: seenLiteral(xmins), readAt });
    return slaves.slice();
  }

  /**
   * The group as held, without a statement, when a read confirmed it at most `maxAgeMs` ago; null otherwise. Its
   * Slaves' health and funds may be that much older than the table's (a health round's writes move `version`
   * only); everything else is checked by the copy's record, which goes in only while the group's `settled` is
   * still the one held (`settledGuard`). The Slaves' order and objects are those of the read that confirmed it.
   */
  recent(userId: string, groupId: string, maxAgeMs: number): HeldGroupSlaves | null {
    const h = this.held.get(`${userId}\u0000${groupId}`);
    if (!h || performance.now() - h.readAt > maxAgeMs) return null;
    return { slaves: h.slaves.slice(), settled: h.settled };
  }

  /**
   * The statement, built once and prepared by name: the server parses it once per connection, and the process
   * does not build it per copy.
   */
  private prepare() {
    const scope = and(
      eq(accounts.userId, sql.placeholder('userId')),
      eq(accounts.groupId, sql.placeholder('groupId')),
      eq(accounts.role, 'slave'),
      live,
    );
    // Timestamps cannot stand in for row versions: now() is a transaction's start, not its commit. A sum of 64-bit
    // hashes needs no sort of the set; a Slave without a rule row hashes '-' for it, so a rule deleted shows too;
    // a Slave that joins or leaves (role, group, removal, deletion) changes the set.
    // The group's versions now; the digests are computed only when `settled` is not the one held (a one-time
    // filter: the scans of `d` show "never executed" otherwise). Through `d`, which always answers one row (an
    // aggregate). `settled` never moves without `version`.
    const gv = (col: string) =>
      sql`coalesce((select ${sql.identifier(col)} from "group_slaves_version" where "group_id" = ${sql.placeholder('groupId')}), 0)::text`;
    const moved = sql`${gv('version')} is distinct from ${sql.placeholder('version')}::text`;
    const settledMoved = sql`${gv('settled')} is distinct from ${sql.placeholder('settled')}::text`;
    const d = this.db.$with('d').as(
      this.db
        .select({
          version: sql<string>`${gv('version')}`.as('version'),
          settled: sql<string>`${gv('settled')}`.as('settled'),
          digest:
            sql<string>`count(*) || ':' || coalesce(sum(hashtextextended(${accounts.id} || ':' || ${accounts.rev} || ':' || coalesce(${copyRules}.xmin::text, '-'), 0)), 0)`.as(
              'digest',
            ),
          // The row versions (xmin): any write of a Slave's account row moves it, a health round's too.
          versions: sql<string>`coalesce(sum(hashtextextended(${accounts}.xmin::text, 0)), 0)::text`.as('versions'),
        })
        .from(accounts)
        .leftJoin(copyRules, eq(copyRules.slaveAccountId, accounts.id))
        .where(and(scope, settledMoved)),
    );
    // CASE, not AND: evaluated in this order, so an unmoved `settled` never computes the digests.
    const changed = sql`case when ${settledMoved} then (select digest from ${d}) is distinct from ${sql.placeholder('digest')}::text else false end`;
    // The rows' sides are subqueries whose filters name no row of theirs but `changed`: the server decides it once,
    // before scanning. At 1000 Slaves (EXPLAIN ANALYZE, load 4) the check alone took 0.9 ms of server time against
    // 4.5 ms with the rows, before their transfer and mapping; a side not wanted shows "never executed".
    const s = this.db
      .select({
        ...accountColumns,
        rule: copyRules.rule,
        at: createdAtKey.as('at'),
        xmin: sql<string>`${accounts}.xmin::text`.as('xmin'),
      })
      .from(accounts)
      .leftJoin(copyRules, eq(copyRules.slaveAccountId, accounts.id))
      .where(and(scope, changed))
      .as('s');
    // The rows of the Slaves whose account row moved, as one JSON text: a thousand narrow rows took 20 ms through the
    // driver and the mapping of the joined select (each carries every column of the other side, null), one text and
    // one JSON.parse a few. Health goes in as JSON, parsed with the rest; updated_at as epoch milliseconds, truncated to
    // the millisecond first as the driver's Date is, then rounded (extract is a float before PostgreSQL 14).
    const v = this.db
      .select({
        round: sql<
          string | null
        >`json_agg(json_build_array(${accounts.id}, ${accounts}.xmin::text, ${accounts.health}, ${accounts.balance}::text, ${accounts.equity}::text, ${epochMs(accounts.updatedAt)}))::text`.as(
          'round',
        ),
      })
      .from(accounts)
      .where(
        and(
          scope,
          sql`case when not (${moved}) then false when not (${settledMoved}) then true else not (${changed}) and (select versions from ${d}) is distinct from ${sql.placeholder('versions')}::text end`,
          // A row version not among those held: written since (a hashed subplan over the versions held). A version
          // held is the row as read: a transaction's rows become visible at its commit, each as it last wrote it.
          sql`${accounts}.xmin::text not in (select unnest(${sql.placeholder('seen')}::text[]))`,
        ),
      )
      .as('v');
    return this.db.with(d).select().from(d).leftJoin(s, sql`true`).leftJoin(v, sql`true`).prepare('slaves_of_group');
  }
}

/**
 * The held Slaves with the health and funds of those a round rewrote: each of these is a new object, every other
 * account and every rule stays the object held. Null when a row names an account not held.
 */
function refreshed(
  held: Held,
  rows: RoundRow[],
): Omit<Held, 'version' | 'settled' | 'digest' | 'versions' | 'readAt'> | null {
  const byId = new Map(rows.map((r) => [r[0], r]));
  const slaves = held.slaves.slice();
  const xmins = held.xmins.slice();
  let found = 0;
  for (const [i, s] of held.slaves.entries()) {
    const r = byId.get(s.account.id);
    if (!r) continue;
    found++;
    xmins[i] = r[1];
    const account = {
      ...s.account,
      health: r[2],
      balance: decOrNull(r[3]),
      equity: decOrNull(r[4]),
      updatedAt: new Date(r[5]),
    };
    slaves[i] = { account, rule: s.rule };
  }
  if (found !== rows.length) return null;
  return { slaves, xmins, seen: seenLiteral(xmins) };
}

/** The distinct row versions as the array literal the statement is sent. */
function seenLiteral(xmins: string[]): string {
  return pgArray([...new Set(xmins)]);
}
