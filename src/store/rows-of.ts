/** The rows of a raw `db.execute` answer: node-postgres gives `{ rows }`, PGlite's session an array or `{ rows }`. */
export function rowsOf<T>(r: unknown): T[] {
  return Array.isArray(r) ? (r as T[]) : ((r as { rows?: T[] }).rows ?? []);
}
