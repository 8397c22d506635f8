/** An error answer of the service, in its body shape {code, error, requestId} plus what the headers said. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null = null,
    /** Seconds to wait, from Retry-After (429, 503). */
    readonly retryAfterSec: number | null = null,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The reasons a rule or request was refused, when the server lists them (details.problems). */
  get problems(): string[] {
    const p = this.details.problems;
    return Array.isArray(p) ? p.map(String) : [];
  }
}

import { humanize } from '../lib/names';

/** Retry-After is either delay-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  const t = Date.parse(v);
  if (Number.isNaN(t)) return null;
  return Math.max(0, Math.ceil((t - now) / 1000));
}

export async function toApiError(response: Response, body?: unknown): Promise<ApiError> {
  let b = body;
  if (b === undefined) {
    try {
      b = await response.clone().json();
    } catch {
      b = null;
    }
  }
  const o = (b && typeof b === 'object' ? b : {}) as Record<string, unknown>;
  const { code, error, requestId, ...rest } = o;
  const message =
    typeof error === 'string'
      ? error
      : typeof o.message === 'string'
        ? o.message
        : `${response.status} ${response.statusText || 'error'}`;
  return new ApiError(
    response.status,
    typeof code === 'string' ? code : `http_${response.status}`,
    message,
    typeof requestId === 'string' ? requestId : response.headers.get('x-request-id'),
    parseRetryAfter(response.headers.get('retry-after')),
    rest,
  );
}

/** A sentence for a person: what happened and, where it helps, what to do. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) {
    const message = humanize(err.message);
    if (err.status === 429) {
      const wait = err.retryAfterSec !== null ? ` Try again in ${formatWait(err.retryAfterSec)}.` : ' Try again later.';
      return `Too many requests: ${message}.${wait}`.replace('..', '.');
    }
    if (err.status === 401) return 'Your session has ended or the credentials are wrong. Sign in again.';
    if (err.status === 500)
      return 'Something went wrong in the service. Try again; if it goes on, give the request id below to whoever runs it.';
    if (err.status >= 500) return `The broker did not answer as expected: ${message}`;
    return message;
  }
  if (err instanceof TypeError) return `The service cannot be reached: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

export function formatWait(sec: number): string {
  const s = Math.max(0, Math.round(sec));
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')} min`;
}
