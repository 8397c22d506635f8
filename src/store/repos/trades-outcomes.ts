import { type SQL, sql } from 'drizzle-orm';
import { allowedFrom, IntentTransitionError, type IntentState } from '../../domain/intent.js';
import { decText } from '../../domain/decimal.js';
import { intentSetToRow } from '../ledger-mappers.js';
import { pgArray } from '../pg-array.js';
import { executeNamed } from '../named-statement.js';
import type { Tx } from './events.js';
import type { Decimal } from '../../domain/decimal.js';
import type { LinkKind, NewLink } from '../../domain/ledger-types.js';

/**
 * The set-based half of an outcome batch: every intent's move in one UPDATE, every link change of a kind in one
 * statement. A batch of 1000 outcomes is a handful of statements instead of 2000. Rows of one statement must
 * address distinct rows (PostgreSQL applies one source row per target row): a batch that names the same intent
 * or link twice is cut into waves, in order, each of distinct keys.
 */

/** Splits items into consecutive waves in which no key repeats; the order of two items with one key is kept. */
function waves<T>(items: T[], key: (t: T) => string): T[][] {
  const out: T[][] = [];
  let cur: T[] = [];
  let seen = new Set<string>();
  for (const it of items) {
    const k = key(it);
    if (seen.has(k)) {
      out.push(cur);
      cur = [];
      seen = new Set();
    }
    seen.add(k);
    cur.push(it);
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

export interface IntentUpdate {
  state: IntentState;
  outcome?: unknown;
  brokerOrderId?: string | null;
  brokerPositionId?: string | null;
  filledVolume?: Decimal | null;
  fillPrice?: Decimal | null;
  slippage?: Decimal | null;
  latency?: Record<string, number>;
  attempts?: number;
  skipReason?: string | null;
  tag?: string;
  prevTags?: string[];
}

/** What one settled broker write changes besides its intent: links opened, closed or resized. */
export interface LinkKey {
  slaveAccountId: string;
  kind: LinkKind;
  slavePositionId: string;
}
export type LinkChange =
  /** Inserts, or adds to the open link's volume (an increase on a netting Slave lands on the position it already has). */
  | { op: 'upsert'; link: NewLink & { kind: LinkKind; volume: Decimal } }
  | { op: 'close'; key: LinkKey; reason: string }
  | { op: 'adjust'; key: LinkKey; by: Decimal };

const rowsOf = <T>(r: unknown): T[] => (Array.isArray(r) ? (r as T[]) : ((r as { rows: T[] }).rows ?? []));

/** Columns an intent update may set, with their SQL type; a key absent from a row leaves its column as it is. */
const INTENT_SET: Array<[string, string, 'text' | 'numeric' | 'jsonb' | 'int']> = [
  ['outcome', 'outcome', 'jsonb'],
  ['broker_order_id', 'brokerOrderId', 'text'],
  ['broker_position_id', 'brokerPositionId', 'text'],
  ['filled_volume', 'filledVolume', 'numeric'],
  ['fill_price', 'fillPrice', 'numeric'],
  ['slippage', 'slippage', 'numeric'],
  ['latency', 'latency', 'jsonb'],
  ['attempts', 'attempts', 'int'],
  ['skip_reason', 'skipReason', 'text'],
  ['tag', 'tag', 'text'],
  ['prev_tags', 'prevTags', 'jsonb'],
];

const INTENT_SET_SQL = sql.raw(
  INTENT_SET.map(([col, , type]) => {
    const v = type === 'jsonb' ? `nullif(d->'${col}', 'null'::jsonb)` : `(d->>'${col}')::${type}`;
    return `${col} = case when d ? '${col}' then ${v} else t.${col} end`;
  }).join(',\n  '),
);

/**
 * Whether an update that found no row should run again: the row is there, in a state it may move from, so it was
 * moved from copy_intents_recent to copy_intents between the update's scan and its row lock (an UPDATE skips a row
 * deleted under it and cannot see the row the same commit inserted; the next statement's snapshot does). A move
 * happens once per row, so a second try finds it; the bound is a guard, not an expected path.
 */
export function movedUnder(found: IntentState | null, to: IntentState, tries: number): boolean {
  return found !== null && tries < 3 && allowedFrom(to).includes(found);
}

/**
 * Moves many intents in one statement, each only from a state its machine allows (domain/intent.ts). When one
 * cannot move, throws IntentTransitionError for it, which rolls the whole transaction back.
 */
export async function moveIntents(
  db: Tx,
  moves: Array<{ id: string; update: IntentUpdate }>,
  now: Date,
): Promise<void> {
  for (const all of waves(moves, (m) => m.id)) await moveWave(db, all, now);
}

async function moveWave(db: Tx, all: Array<{ id: string; update: IntentUpdate }>, now: Date): Promise<void> {
  let wave = all;
  for (let tries = 1; ; tries++) {
    // The states each target may be reached from, once per statement: per row they were ~40 of its ~480 bytes, and
    // the server binds the whole document (2 ms a batch of 333 on PostgreSQL).
    const from: Record<string, IntentState[]> = {};
    const docs = wave.map(({ id, update }) => {
      const row = intentSetToRow(update) as Record<string, unknown>;
      from[update.state] ??= allowedFrom(update.state);
      const d: Record<string, unknown> = { id, state: update.state };
      for (const [col, field] of INTENT_SET) if (row[field] !== undefined) d[col] = row[field];
      return d;
    });
    // Not a named statement (executeNamed): its join to copy_intents is planned for the table as it is now. Named,
    // this update's server time over a copy-overhead bench run was 3.0x that of the unnamed one (3882 vs 1290 ms).
    const res = await db.execute(sql`
      update copy_intents t set state = d->>'state', updated_at = ${now.toISOString()}::timestamptz,
        ${INTENT_SET_SQL}
      from jsonb_array_elements(${JSON.stringify(docs)}::jsonb) as j(d)
      where t.id = d->>'id' and (${JSON.stringify(from)}::jsonb -> (d->>'state')) ? t.state
      returning t.id`);
    const moved = new Set(rowsOf<{ id: string }>(res).map((r) => r.id));
    if (moved.size === wave.length) return;
    const stuck = wave.find((m) => !moved.has(m.id))!;
    const cur = rowsOf<{ state: string }>(
      await db.execute(sql`select state from copy_intents where id = ${stuck.id} limit 1`),
    );
    const state = (cur[0]?.state as IntentState | undefined) ?? null;
    if (!movedUnder(state, stuck.update.state, tries))
      throw new IntentTransitionError(stuck.id, stuck.update.state, state);
    // The rows not written, once more; those written stay written.
    wave = wave.filter((m) => !moved.has(m.id));
  }
}

const keyText = (k: LinkKey) => `${k.slaveAccountId}|${k.kind}|${k.slavePositionId}`;
const keyOf = (l: LinkChange) => (l.op === 'upsert' ? keyText(l.link) : keyText(l.key));

/**
 * Link changes, set-based: per wave of distinct links one upsert, one close and one resize statement at most.
 * Changes of different links do not depend on one another, so their order within a wave does not matter.
 */
export async function applyLinks(db: Tx, changes: LinkChange[], now: Date): Promise<void> {
  for (const wave of waves(changes, keyOf)) {
    const ups = wave.flatMap((l) => (l.op === 'upsert' ? [l.link] : []));
    // Rows written out, not `{ ...key, r }`: see outcome-ledger.ts on object spreads under Node 20.
    const closes = wave.flatMap((l) =>
      l.op === 'close' ? [{ s: l.key.slaveAccountId, k: l.key.kind, p: l.key.slavePositionId, r: l.reason }] : [],
    );
    const adjusts = wave.flatMap((l) =>
      l.op === 'adjust' ? [{ s: l.key.slaveAccountId, k: l.key.kind, p: l.key.slavePositionId, b: decText(l.by) }] : [],
    );
    if (ups.length > 0) await executeNamed(db, linkUpsert(ups));
    if (closes.length > 0)
      await db.execute(sql`
        update position_links p set open = false, closed_reason = x.r, closed_at = ${now.toISOString()}::timestamptz
        from json_to_recordset(${JSON.stringify(closes)}::json) as x(s text, k text, p text, r text)
        where p.slave_account_id = x.s and p.kind = x.k and p.slave_position_id = x.p and p.open = true`);
    if (adjusts.length > 0)
      await db.execute(sql`
        update position_links p set volume = greatest(coalesce(p.volume, 0) + x.b, 0)
        from json_to_recordset(${JSON.stringify(adjusts)}::json) as x(s text, k text, p text, b numeric)
        where p.slave_account_id = x.s and p.kind = x.k and p.slave_position_id = x.p and p.open = true`);
  }
}

/**
 * The upsert of a wave's new links: each column one array parameter (`unnest`), one fixed statement whatever the
 * number of rows. Against one JSON document of every row's keys (`json_to_recordset`) the server reads a third
 * fewer bytes and parses no JSON: at 1000 Slaves this is one of the outcome flush's larger statements.
 */
function linkUpsert(ups: Array<NewLink & { kind: LinkKind; volume: Decimal }>): SQL {
  const col = (f: (l: (typeof ups)[number]) => string | null) => pgArray(ups.map(f));
  return sql`
    insert into position_links (id, kind, master_account_id, master_position_id, slave_account_id,
      slave_position_id, intent_id, volume)
    select * from unnest(${col((l) => l.id)}::text[], ${col((l) => l.kind)}::text[],
      ${col((l) => l.masterAccountId)}::text[], ${col((l) => l.masterPositionId)}::text[],
      ${col((l) => l.slaveAccountId)}::text[], ${col((l) => l.slavePositionId)}::text[],
      ${col((l) => l.intentId ?? null)}::text[], ${col((l) => decText(l.volume))}::numeric[])
    on conflict (slave_account_id, kind, slave_position_id) do update
      set volume = coalesce(position_links.volume, 0) + excluded.volume
      where position_links.open = true`;
}
