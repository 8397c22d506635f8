import { sql, type AnyColumn, type SQL } from 'drizzle-orm';
import { invalid } from '../../domain/errors.js';

/**
 * Keyset paging over (created_at, id), newest first, on the (user, created_at) indexes. A row's position is
 * its created_at as text to the microsecond the column holds (a JS Date would cut it to the millisecond and
 * skip or repeat rows at a page boundary) and its id, which breaks ties.
 */
export const positionOf = (createdAt: AnyColumn, id: AnyColumn): SQL<string> =>
  sql<string>`to_char(${createdAt} at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '|' || ${id}`;

const POSITION = /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6})\|(.{1,64})$/;

export function olderThan(createdAt: AnyColumn, id: AnyColumn, position: string): SQL {
  const m = POSITION.exec(position);
  if (!m) throw invalid('cursor is not a cursor of this list: pass the nextCursor of its previous page unchanged');
  return sql`(${createdAt}, ${id}) < ((${m[1]})::timestamp at time zone 'UTC', ${m[2]})`;
}
