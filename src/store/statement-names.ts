/*
 * The names of the statements the store prepares, by text (named-statement.ts gives them; the embedded store's
 * client finds them again here). No imports: both the store's drivers and its repositories read it.
 */

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
