/** Output of every command: a table or a sentence for people, or with --json one JSON document for scripts. */
export function out(json: boolean | undefined, value: unknown, human: string | (() => string)): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${typeof human === 'string' ? human : human()}\n`);
}

export type Column<T> = [header: string, cell: (row: T) => unknown];

const text = (v: unknown): string =>
  v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v);

/** A plain-text table, columns as wide as their widest cell; `empty` when there are no rows. */
export function table<T>(rows: T[], cols: Array<Column<T>>, empty = '(none)'): string {
  if (rows.length === 0) return empty;
  const cells = rows.map((r) => cols.map(([, f]) => text(f(r))));
  const widths = cols.map(([h], i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c
      .map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(cols.map(([h]) => h.toUpperCase())), ...cells.map(line)].join('\n');
}

/** `key: value` lines for one record. */
export function fields(pairs: Array<[string, unknown]>): string {
  const w = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(w)}  ${text(v)}`).join('\n');
}
