import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode } from '../domain/errors.js';
import { isStoreUnavailable, storeUnavailable, unavailableReason } from '../store/unavailable.js';

/** The one place where core errors become HTTP. */
export const STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  write_outcome_unknown: 409,
  reconnect_required: 409,
  account_not_master: 409,
  account_not_connected: 409,
  panic_close_running: 409,
  account_already_connected: 409,
  copy_cycle: 409,
  open_copies: 409,
  quota_exceeded: 409,
  platform_not_configured: 409,
  stream_quota_exceeded: 429,
  slaves_backlogged: 429,
  idempotency_key_in_flight: 409,
  payload_too_large: 413,
  idempotency_key_reused: 422,
  broker_auth_failed: 422,
  rate_limited: 429,
  upstream_error: 502,
  upstream_unavailable: 503,
  store_unavailable: 503,
  data_dir_in_use: 503,
  port_in_use: 503,
  internal_error: 500,
};

export interface ErrorBody {
  code: string;
  error: string;
  requestId: string;
  [extra: string]: unknown;
}

export function sendError(
  req: FastifyRequest,
  reply: FastifyReply,
  status: number,
  code: string,
  message: string,
  extra?: Record<string, unknown>,
): FastifyReply {
  // Details first: a detail named like a contract field (an upstream's own `code`) must never replace ours.
  const body: ErrorBody = { ...(extra ?? {}), code, error: message, requestId: req.id };
  return reply.code(status).type('application/json').send(body);
}

/**
 * Fastify's own errors (validation, JSON parse, size) become clear 4xx in our body shape; anything unknown is
 * a 500 whose message is generic, so internals and secrets never leak into a response.
 */
export function errorHandler(
  err: FastifyError | AppError | Error,
  req: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  if (err instanceof AppError) {
    if (err.retryAfter !== undefined) reply.header('retry-after', String(err.retryAfter));
    return sendError(req, reply, STATUS[err.code], err.code, err.message, err.details);
  }
  const fe = err as FastifyError;
  if (fe.validation && fe.validationContext === 'body' && req.body === undefined) {
    return sendError(req, reply, 400, 'invalid_request', 'the body is required: send a JSON object');
  }
  if (fe.validation)
    return sendError(
      req,
      reply,
      400,
      'invalid_request',
      describeValidation(fe.validationContext ?? 'request', fe.validation as AjvError[]),
    );
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return sendError(
      req,
      reply,
      413,
      'payload_too_large',
      `request body is larger than the limit of ${req.routeOptions.bodyLimit ?? 'the server'} bytes`,
    );
  if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return sendError(req, reply, 415, 'unsupported_media_type', 'send the body as application/json');
  if (fe.statusCode === 400 && (fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError)) {
    return sendError(req, reply, 400, 'invalid_request', `the body is not valid JSON: ${err.message}`);
  }
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500)
    return sendError(req, reply, fe.statusCode, 'invalid_request', err.message);
  // The store gone away (a PostgreSQL restart, a network cut, no pooled connection in time), wherever it was met:
  // a retryable 503, never a 500. The driver's message stays in the log (it may name the host).
  if (isStoreUnavailable(err)) {
    req.log.warn({ err, reason: unavailableReason(err) }, 'the store cannot be reached: answered 503');
    return errorHandler(storeUnavailable(err), req, reply);
  }
  req.log.error({ err }, 'unhandled error');
  return sendError(req, reply, 500, 'internal_error', 'internal error; the request id identifies it in the server log');
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/**
 * Turns Ajv's errors into one sentence per field. A union of literals (side: buy | sell) reports one
 * `const` error per branch plus an `anyOf`: those fold into "must be one of buy, sell".
 */
export function describeValidation(where: string, errors: AjvError[]): string {
  const byField = new Map<string, string[]>();
  const allowed = new Map<string, unknown[]>();
  const fieldOf = (e: AjvError) => `${where}${e.instancePath.replace(/\//g, '.')}`;
  for (const e of errors) {
    const field = fieldOf(e);
    if (e.keyword === 'const') {
      allowed.set(field, [...(allowed.get(field) ?? []), e.params.allowedValue]);
      continue;
    }
    let msg: string;
    if (e.keyword === 'anyOf' && allowed.has(field)) msg = `${field} must be one of ${allowed.get(field)!.join(', ')}`;
    else if (e.keyword === 'anyOf') msg = `${field} has the wrong type or shape`;
    else if (e.keyword === 'required')
      msg = `${field === where ? where : field}.${String(e.params.missingProperty)} is required`;
    else if (e.keyword === 'additionalProperties')
      msg = `${field} has an unknown field ${JSON.stringify(e.params.additionalProperty)}`;
    else if (e.keyword === 'enum') msg = `${field} must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`;
    else msg = `${field} ${e.message ?? 'is invalid'}`;
    const list = byField.get(field) ?? [];
    if (!list.includes(msg)) list.push(msg);
    byField.set(field, list);
  }
  // Type errors inside a union branch are noise once the union itself is reported.
  const out = [...byField.entries()].flatMap(([field, msgs]) =>
    msgs.some((m) => m.includes('must be one of') || m.includes('wrong type'))
      ? msgs.filter((m) => m.startsWith(`${field} must be one of`) || m.includes('wrong type'))
      : msgs,
  );
  return out.length > 0 ? out.join('; ') : `${where} is invalid`;
}
