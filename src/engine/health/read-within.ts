import { AppError } from '../../domain/errors.js';

/**
 * The read, or a failure after `ms`. At the deadline the read is aborted: a self-paced adapter (cTrader) then
 * withdraws what still waits in its own queue and says so at once (`rate_limited`: our pacing, the broker never
 * asked), which is what this read is counted as. Before, such a read failed as "no answer" (pressure, backed off
 * for rounds, an outage once it lasted), and its requests were still sent afterwards: at 10,000 cTrader accounts,
 * 2,308 reads of a first round failed so, each a wasted place in the 50 req/s window.
 */
export async function readWithin<T>(read: (signal: AbortSignal) => Promise<T>, ms: number): Promise<T> {
  const ctl = new AbortController();
  const p = read(ctl.signal);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  try {
    const first = await Promise.race([p, deadline]);
    if (first !== TIMED_OUT) return first;
  } finally {
    clearTimeout(timer);
  }
  ctl.abort();
  // What the abort settled at once (requests withdrawn from the adapter's queue); anything on the wire is not waited for.
  const now = await Promise.race([
    p.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
    new Promise<null>((resolve) => setImmediate(() => resolve(null))),
  ]);
  if (now && 'value' in now) return now.value;
  if (now && now.error instanceof AppError && now.error.code === 'rate_limited') throw now.error;
  p.catch(() => undefined);
  throw new AppError('upstream_unavailable', `no answer within ${ms} ms`);
}

const TIMED_OUT = Symbol('timed out');
