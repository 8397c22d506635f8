import type { SQL } from 'drizzle-orm';
import type { PgDialect, PgSession } from 'drizzle-orm/pg-core';
import type { Db } from './db.js';

/**
 * The names given so far, by statement text. A text gets one name for the life of the process: node-postgres
 * parses a name once per connection and refuses the same name with another text.
 */
const names = new Map<string, string>();

/**
 * Past this many texts, new ones run unnamed: each name costs a parsed statement and its plan on every pooled
 * connection of the server, and a caller whose texts never repeat must not grow them without end.
 */
export const MAX_NAMED_TEXTS = 256;

/** The name for a statement's text, or undefined once MAX_NAMED_TEXTS are named. */
export function statementName(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED_TEXTS) names.set(text, (name = `ct_stmt_${names.size + 1}`));
  return name;
}

/** The name a text was given, without naming it: how the embedded store's client finds the texts to prepare. */
export function namedAs(text: string): string | undefined {
  return names.get(text);
}

/** Drizzle keeps its session and dialect off its public types; both are stable members of PgDatabase. */
interface DrizzleInternals {
  session: PgSession;
  dialect: PgDialect;
}

/**
 * Runs a statement built with `sql` as a named prepared statement on PostgreSQL: the server parses its text once per
 * connection instead of on every call, and after five calls may keep one generic plan for it. For a statement whose
 * text depends on the shape of its input and never on a value (every value a parameter), as a copy's record is: its
 * parse and plan were 0.6 ms of the server's ~1.2 ms per record at 100 Slaves, paid on every copy.
 *
 * Only for statements whose plan has no choice that depends on a table's size (inserts from parameters, upserts on
 * their conflict index, lookups by primary key): a generic plan made while a table was small is kept until the next
 * analyze of it. On the embedded store drizzle's driver drops the name; its worker's client finds it again by the
 * text (`namedAs`) and its worker prepares the statement (pglite-named.ts). Answers as `db.execute` does.
 */
export function executeNamed(db: Pick<Db, 'execute'>, q: SQL): Promise<unknown> {
  const { session, dialect } = db as unknown as DrizzleInternals;
  const query = dialect.sqlToQuery(q);
  return session.prepareQuery(query, undefined, statementName(query.sql), false).execute();
}
