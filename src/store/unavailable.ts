import { AppError } from '../domain/errors.js';

/** Seconds a client is told to wait before retrying while the store cannot be reached (Retry-After). */
export const STORE_RETRY_AFTER_SEC = 2;

/** Socket errors of a server that is down, restarting, or not reachable on the network (yet). */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  // A host name that does not resolve yet (a compose service starting): the same wait.
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server that ended the session or will not take one now: 57P01 admin_shutdown (a fast or smart
 * stop, a restart), 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up, in recovery), 53300
 * too_many_connections. Class 08 (connection exceptions) is matched by its prefix.
 */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/**
 * The messages node-postgres gives these states without a code: the server closed the socket ("Connection
 * terminated unexpectedly", "Connection terminated"), a connect that did not finish within the pool's
 * connectionTimeoutMillis ("timeout exceeded when trying to connect", "Connection terminated due to connection
 * timeout"), a client already broken by one of them ("Client has encountered a connection error and is not queryable"),
 * or already dropped after one (pg-guard.ts releases a lost checked-out client at once: "Client was closed and is
 * not queryable").
 */
const MESSAGES = [
  /^Connection terminated\b/,
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
];

function connectionLost(e: unknown): boolean {
  if (typeof e !== 'object' || e === null || e instanceof AppError) return false;
  const { code, message } = e as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code) || SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
  }
  return typeof message === 'string' && MESSAGES.some((m) => m.test(message));
}

/** Every error an error wraps, itself first: drizzle puts the driver's error in `cause`; a connect to several addresses throws an AggregateError. */
function* chain(err: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0) {
    const e = queue.shift();
    if (e === undefined || e === null || seen.has(e)) continue;
    seen.add(e);
    yield e;
    if (typeof e === 'object') {
      queue.push((e as { cause?: unknown }).cause);
      const errors = (e as { errors?: unknown }).errors;
      if (Array.isArray(errors)) queue.push(...errors);
    }
  }
}

/**
 * Whether a PostgreSQL driver error says the server cannot be reached now (down, restarting, starting, cut off,
 * out of connections), as opposed to refusing the statement: a constraint, a syntax error or a refused password
 * are not. Only the store's connection code asks (pg-guard.ts), on the driver's own errors: a socket error of a
 * broker must not read as the store's.
 */
export function isConnectionError(err: unknown): boolean {
  for (const e of chain(err)) if (connectionLost(e)) return true;
  return false;
}

/** Whether an error is, or wraps, the store's `store_unavailable` (what pg-guard.ts makes of a connection error). */
export function isStoreUnavailable(err: unknown): boolean {
  for (const e of chain(err)) if (e instanceof AppError && e.code === 'store_unavailable') return true;
  return false;
}

/**
 * A short word for logs: the driver's code (ECONNREFUSED, 57P03, ...) when it has one, else the first line of its
 * message ("Connection terminated unexpectedly").
 */
export function unavailableReason(err: unknown): string {
  let first: unknown;
  for (const e of chain(err)) {
    if (e instanceof AppError) continue;
    first ??= e;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  const message = first instanceof Error ? first.message : String(first ?? err);
  return message.split('\n')[0]!.slice(0, 120);
}

/**
 * The error every caller sees for a store that cannot be reached: 503 `store_unavailable`, retryable, with
 * Retry-After. Its message names no host or driver detail (it reaches API clients); the cause keeps them for the log.
 */
export function storeUnavailable(
  cause: unknown,
  message = 'the store (database) cannot be reached right now; retry shortly',
): AppError {
  return new AppError('store_unavailable', message, {
    retryable: true,
    retryAfter: STORE_RETRY_AFTER_SEC,
    cause,
  });
}
