import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { ApiDeps } from '../deps.js';
import { sendError } from '../errors.js';

/**
 * Spec 8.1: at most N account-connection requests per window per authenticated user; every call to a
 * connect* route counts, whatever its outcome. Kept in the store so it holds across restarts and processes.
 * Runs after authentication (the user is known).
 */
export function connectLimit(deps: ApiDeps): onRequestAsyncHookHandler {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    if (!req.principal) return;
    const { max, windowMs } = deps.connectLimit;
    const r = await deps.store.requests.hit(`connect:${req.principal.userId}`, max, windowMs);
    if (!r.allowed) {
      reply.header('retry-after', String(r.retryAfterSec));
      await sendError(
        req,
        reply,
        429,
        'rate_limited',
        `at most ${max} account-connection requests per ${Math.round(windowMs / 60000)} minutes; try again in ${r.retryAfterSec} s`,
        { retryAfter: r.retryAfterSec },
      );
      return reply;
    }
  };
}
