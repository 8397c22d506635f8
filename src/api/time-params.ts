import { invalid } from '../domain/errors.js';

/** Accepts ISO 8601 date-times and Unix epoch milliseconds (our choice for the spec's open `from`/`to` formats). */
export function parseTimeParam(v: string | undefined, name: string): Date | undefined {
  if (v === undefined || v === '') return undefined;
  const d = /^\d{1,16}$/.test(v) ? new Date(Number(v)) : /^\d{4}-\d{2}-\d{2}/.test(v) ? new Date(v) : new Date(NaN);
  if (Number.isNaN(d.getTime()))
    throw invalid(`${name} must be an ISO 8601 date-time or epoch milliseconds, got ${JSON.stringify(v)}`);
  return d;
}
