import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { invalid } from '../domain/errors.js';

/**
 * Keyset paging for every list route: `limit` (1..max, a larger one is a 400 rather than silently less) and an
 * opaque `cursor` from the previous page. Items are ordered by their id, whose leading time part makes that
 * creation order and never changes, so a page boundary is stable while rows are added or removed. The next
 * page's cursor is in the body's `nextCursor` where the envelope is ours, and in a `Link: <...>; rel="next"`
 * header on every paged answer (the only place for it where the spec fixes the envelope).
 */
/** `dflt: null`: without `limit` the whole list (routes whose envelope the spec fixes, bounded by a quota). */
export interface PageSpec {
  kind: string;
  max: number;
  dflt: number | null;
}

export const pageQuery = (p: PageSpec) => ({
  limit: Type.Optional(
    Type.String({
      pattern: '^[0-9]{1,6}$',
      description: `page size, 1..${p.max} (default ${p.dflt ?? 'the whole list'}); above ${p.max} is a 400`,
      'x-open-point': true,
    }),
  ),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'opaque: the nextCursor (or Link rel="next") of the previous page',
      'x-open-point': true,
    }),
  ),
});

export const NextCursor = Type.Union([Type.String(), Type.Null()], {
  description: 'pass as cursor for the next page; null on the last page',
  'x-open-point': true,
});

export interface PageRequest {
  limit: number;
  after: string | undefined;
}

export function readPage(q: { limit?: string | undefined; cursor?: string | undefined }, p: PageSpec): PageRequest {
  if (q.limit === undefined && p.dflt === null)
    return {
      limit: Number.MAX_SAFE_INTEGER,
      after: q.cursor === undefined ? undefined : decodeCursor(q.cursor, p.kind),
    };
  const limit = q.limit === undefined ? p.dflt! : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1) throw invalid(`limit must be a whole number from 1 to ${p.max}`);
  if (limit > p.max)
    throw invalid(`limit ${limit} is above the maximum of ${p.max} for this list; page on with cursor`);
  return { limit, after: q.cursor === undefined ? undefined : decodeCursor(q.cursor, p.kind) };
}

export const encodeCursor = (kind: string, id: string): string =>
  Buffer.from(JSON.stringify([kind, id])).toString('base64url');

function decodeCursor(cursor: string, kind: string): string {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(v) &&
      v.length === 2 &&
      v[0] === kind &&
      typeof v[1] === 'string' &&
      v[1].length > 0 &&
      v[1].length <= 200
    )
      return v[1];
  } catch {
    /* falls through to the 400 */
  }
  throw invalid('cursor is not a cursor of this list: pass the nextCursor of its previous page unchanged');
}

/**
 * The page out of `rows` fetched with limit + 1 (the extra row only says there is more). Sets the Link header
 * and returns the items and the next cursor.
 */
export function finishPage<T>(
  req: FastifyRequest,
  reply: FastifyReply,
  rows: T[],
  page: PageRequest,
  p: PageSpec,
  idOf: (t: T) => string,
): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, page.limit);
  const nextCursor =
    rows.length > page.limit && items.length > 0 ? encodeCursor(p.kind, idOf(items[items.length - 1]!)) : null;
  if (nextCursor) {
    const url = new URL(req.originalUrl, 'http://x');
    url.searchParams.set('cursor', nextCursor);
    url.searchParams.set('limit', String(page.limit));
    reply.header('link', `<${url.pathname}${url.search}>; rel="next"`);
  }
  return { items, nextCursor };
}

/**
 * Paging over a list already in memory (bounded by a quota, or read whole from a broker) by a sort key that
 * is unique per item; returns up to limit + 1 items for finishPage.
 */
export function pageOf<T>(all: T[], page: PageRequest, keyOf: (t: T) => string, order: 'asc' | 'desc'): T[] {
  const sign = order === 'asc' ? 1 : -1;
  const sorted = [...all].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0) * sign);
  const rest =
    page.after === undefined
      ? sorted
      : sorted.filter((x) => (keyOf(x) > page.after! ? 1 : keyOf(x) < page.after! ? -1 : 0) === sign);
  return rest.slice(0, page.limit === Number.MAX_SAFE_INTEGER ? undefined : page.limit + 1);
}
