import { readJsonObject } from '../http-common.js';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A handler's answer; the server writes it as JSON (204 and undefined bodies are sent empty). */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** MetaApi error names by HTTP status (fact sheet A2); `id` is the integer the real bodies carry. */
const ERROR_NAMES: Record<number, [number, string]> = {
  400: [1, 'ValidationError'],
  401: [2, 'UnauthorizedError'],
  403: [3, 'ForbiddenError'],
  404: [4, 'NotFoundError'],
  409: [5, 'ConflictError'],
  429: [6, 'TooManyRequestsError'],
  500: [7, 'InternalError'],
};

/** Thrown by handlers and turned into the MetaApi error body `{id, error, message, details?, metadata?}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: { details?: unknown; metadata?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
  }

  toReply(): Reply {
    const [id, error] = ERROR_NAMES[this.status] ?? [8, 'ApiError'];
    const body: Record<string, unknown> = { id, error, message: this.message };
    if (this.extra.details !== undefined) body.details = this.extra.details;
    if (this.extra.metadata !== undefined) body.metadata = this.extra.metadata;
    return { status: this.status, body, ...(this.extra.headers ? { headers: this.extra.headers } : {}) };
  }
}

export function send(res: ServerResponse, reply: Reply): void {
  if (res.destroyed || res.headersSent) return;
  const headers = reply.headers ?? {};
  if (reply.status === 204 || reply.body === undefined) {
    res.writeHead(reply.status, headers).end();
    return;
  }
  res.writeHead(reply.status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(reply.body));
}

export const readJson = (req: IncomingMessage) =>
  readJsonObject(req, (status, message) => new ApiError(status, message));

/** 429 as both MetaApi APIs send it: Retry-After header plus metadata.recommendedRetryTime (an ISO time). */
export function tooManyRequests(
  retryAfterSec: number,
  api: 'client' | 'provisioning',
  message?: string,
  now = Date.now(),
): ApiError {
  const recommendedRetryTime = new Date(now + retryAfterSec * 1000).toISOString();
  const metadata: Record<string, unknown> =
    api === 'client'
      ? {
          periodInSeconds: 1,
          creditsAvailable: 0,
          creditsUsed: 1000,
          creditsRequired: 50,
          exceededConfig: 'perAccount',
          exceededPeriod: '1s',
          recommendedRetryTime,
        }
      : {
          periodInMinutes: 1,
          requestsPerPeriodAllowed: 10,
          exceededConfig: 'perAccount',
          exceededPeriod: '60s',
          recommendedRetryTime,
        };
  const msg =
    message ??
    (api === 'client'
      ? 'The API allows 1000 cpu credits per 1s for an account. Please wait and retry'
      : 'The API allows 10 requests per 60s. Please wait and retry');
  return new ApiError(429, msg, {
    metadata,
    headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSec))) },
  });
}
