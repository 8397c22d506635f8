import { passWriteGate } from '../domain/write-gate.js';

/**
 * The wire of the REST platforms (TradeLocker, MetaApi): one JSON request, no interpretation, no retries.
 * Every call ends as a WireResult, never a throw; what a result means (and whether a write may be repeated)
 * is decided by the platform's adapter, which knows whether the call was a read or a write.
 */

export type WireResult =
  | { kind: 'response'; status: number; body: unknown; retryAfterSec: number | null }
  /** No answer within the timeout: a write may or may not have been applied. */
  | { kind: 'timeout'; method: string; path: string }
  /** `notSent` when the request provably never reached the server (connection refused, DNS). */
  | { kind: 'network'; method: string; path: string; code: string | null; message: string; notSent: boolean };

/** Connection-level failures that prove the request never left (so even a write is safe to resend). */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function errorCode(err: unknown): string | null {
  let e: unknown = err;
  for (let i = 0; i < 4 && e; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

/** Retry-After is seconds or an HTTP date. */
export function parseRetryAfterHeader(h: string | null, now = Date.now()): number | null {
  if (h === null || h.trim() === '') return null;
  const n = Number(h);
  if (Number.isFinite(n) && n >= 0) return n;
  const t = Date.parse(h);
  return Number.isNaN(t) ? null : Math.max(0, Math.ceil((t - now) / 1000));
}

function failure(method: string, path: string, err: unknown): WireResult {
  const name = (err as { name?: unknown })?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return { kind: 'timeout', method, path };
  const code = errorCode(err);
  return {
    kind: 'network',
    method,
    path,
    code,
    message: err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err),
    notSent: code !== null && NOT_SENT_CODES.has(code),
  };
}

/**
 * Sends one request with a JSON body (if any) and reads the answer within `timeoutMs`. A trading write (`write`)
 * first passes the caller's write gate (domain/write-gate.ts), which may refuse it by throwing: nothing is sent.
 */
export async function sendJson(
  fetchImpl: typeof fetch,
  url: URL,
  req: {
    method: string;
    path: string;
    headers: Record<string, string>;
    body?: unknown;
    timeoutMs: number;
    write?: boolean;
  },
): Promise<WireResult> {
  const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  let text: string;
  if (req.write) passWriteGate();
  try {
    res = await fetchImpl(url, {
      method: req.method,
      headers,
      ...(req.body !== undefined ? { body: JSON.stringify(req.body) } : {}),
      signal: AbortSignal.timeout(req.timeoutMs),
    });
    // The timeout signal also covers the body: a server that sends headers and then stalls is still a timeout.
    text = await res.text();
  } catch (err) {
    return failure(req.method, req.path, err);
  }
  let body: unknown = null;
  if (text.length > 0) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  return {
    kind: 'response',
    status: res.status,
    body,
    retryAfterSec: parseRetryAfterHeader(res.headers.get('retry-after')),
  };
}
