/**
 * A PostgreSQL array literal (`{"a",NULL}`) for one parameter: a batch of any size is then one statement with a
 * fixed number of parameters (`unnest($1::text[], ...)`), which both drivers parse and plan once, instead of a
 * VALUES list that the query builder walks value by value.
 */
export function pgArray(values: ReadonlyArray<string | number | null>): string {
  return `{${values.map((v) => (v === null ? 'NULL' : `"${String(v).replace(/["\\]/g, (c) => `\\${c}`)}"`)).join(',')}}`;
}
