/**
 * One error tree for the core. Only api/ turns these into HTTP; `code` is the stable machine-readable value.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  /** The caller may see the thing but its role does not allow this change (docs/people.md). */
  | 'forbidden'
  /** A broker (or its upstream) refused the broker credentials; never the caller's own credential (that is unauthorized). */
  | 'broker_auth_failed'
  | 'not_found'
  | 'conflict'
  | 'write_outcome_unknown'
  | 'reconnect_required'
  | 'rate_limited'
  | 'upstream_error'
  | 'upstream_unavailable'
  /** The store (PostgreSQL) cannot be reached now: a restart, a network cut, no free connection in time. Retryable. */
  | 'store_unavailable'
  | 'payload_too_large'
  | 'idempotency_key_reused'
  | 'idempotency_key_in_flight'
  | 'account_not_master'
  | 'account_not_connected'
  | 'panic_close_running'
  | 'account_already_connected'
  | 'copy_cycle'
  /** Removing an account or a group while copies it leads or holds are open; `?force=true` overrides. */
  | 'open_copies'
  /** A per-user quota (groups, keys, endpoints, accounts) is full; `quota` in the body names it. */
  | 'quota_exceeded'
  /** Too many event streams open on one credential at once. */
  | 'stream_quota_exceeded'
  /** An order refused because a copy of it would go stale in an eligible Slave's backlog (admission control). */
  | 'slaves_backlogged'
  | 'data_dir_in_use'
  /** The address `serve` was asked to listen on is taken (raised before anything is opened or written). */
  | 'port_in_use'
  /** A platform's application settings (e.g. platform C's OAuth client id and secret) are not configured on this server. */
  | 'platform_not_configured'
  | 'internal_error';

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  /** Seconds to wait before retrying, when known (rate limits). */
  readonly retryAfter?: number;
  readonly details?: Record<string, unknown>;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { retryable?: boolean; retryAfter?: number; cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.retryable = opts.retryable ?? false;
    if (opts.retryAfter !== undefined) this.retryAfter = opts.retryAfter;
    if (opts.details !== undefined) this.details = opts.details;
  }
}

export const notFound = (what: string) => new AppError('not_found', `${what} not found`);
export const invalid = (message: string, details?: Record<string, unknown>) =>
  new AppError('invalid_request', message, details ? { details } : {});
