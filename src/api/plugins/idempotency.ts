import { SECRET_RESPONSE_ROUTES } from './request-records.js';
import { createHash, randomUUID } from 'node:crypto';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onSendAsyncHookHandler,
  preHandlerAsyncHookHandler,
} from 'fastify';
import type { Store } from '../../store/store.js';
import { sendError } from '../errors.js';
import { storableJson, storableText } from '../text-safety.js';

const WRITE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
export const MAX_KEY_LENGTH = 255;
/** The route prefixes whose writes honour the header (server.ts registers the plugin with them). */
export const IDEMPOTENT_PREFIXES = ['/v1/'];

/** Whether a route takes Idempotency-Key: the plugin's hooks and the OpenAPI document both ask this. */
export const honoursIdempotencyKey = (method: string, url: string, prefixes = IDEMPOTENT_PREFIXES): boolean =>
  WRITE.has(method.toUpperCase()) && prefixes.some((p) => url.startsWith(p));
/** Response headers a replay must repeat (where a started job lives). */
const KEPT_HEADERS = ['location', 'retry-after'];

export interface IdempotencyOptions {
  /** Route prefixes whose writes honour the header. */
  prefixes: string[];
  /** How long a key is remembered (24 h, as Stripe; the IETF draft leaves it to the resource). */
  ttlMs?: number;
  onError?: (err: unknown) => void;
  /** Recorded on each claim, so a later start can tell keys of a stopped process from this one's. */
  instanceId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: { userId: string; key: string };
  }
}

/** Same JSON whatever the order of its keys: a client that re-serialises its body is still sending the same body. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v ?? null);
}

/**
 * The input guard bounds a body's depth; should anything else get through, a marker beats a stack overflow
 * (500). The marker is unique: two such bodies are never taken for the same request (no wrong replay).
 */
function canonicalOrMarker(v: unknown): string {
  try {
    return canonical(v);
  } catch {
    return `[unserialisable body ${randomUUID()}]`;
  }
}

/**
 * Idempotency-Key on writes (draft-ietf-httpapi-idempotency-key-header): the first request with a key runs
 * and its answer is stored; the same key with the same method, path and body gets that answer again
 * (`Idempotent-Replayed: true`); with anything else 422; while the first still runs 409. Keys are per user.
 * The key is claimed after authentication and validation, so a request refused before its handler ran
 * leaves nothing behind and can be corrected and resent with the same key.
 */
export function idempotency(app: FastifyInstance, store: Store, opts: IdempotencyOptions): void {
  const ttlMs = opts.ttlMs ?? 24 * 3600_000;
  const repo = store.idempotency(ttlMs);
  const purge = setInterval(
    () => void repo.purgeExpired().catch((err: unknown) => opts.onError?.(err)),
    Math.min(ttlMs, 3600_000),
  );
  purge.unref();
  app.addHook('onClose', async () => clearInterval(purge));

  const preHandler = async (req: FastifyRequest, reply: FastifyReply) => {
    const route = req.routeOptions.url;
    if (!route || !honoursIdempotencyKey(req.method, route, opts.prefixes)) return;
    const header = req.headers['idempotency-key'];
    if (header === undefined) return;
    if (Array.isArray(header)) return sendError(req, reply, 400, 'invalid_request', 'send one Idempotency-Key header');
    if (header.length === 0 || header.length > MAX_KEY_LENGTH)
      return sendError(req, reply, 400, 'invalid_request', `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters`);
    const userId = req.principal?.userId;
    if (!userId) return;
    const digest = createHash('sha256')
      .update(`${req.method} ${req.url}\n${canonicalOrMarker(req.body)}`)
      .digest('hex');
    const claim = await repo.claim(userId, header, route, digest, { requestId: req.id, claimedBy: opts.instanceId });
    if (claim.claimed) {
      req.idempotency = { userId, key: header };
      return;
    }
    const { existing } = claim;
    if (existing.bodyDigest !== digest) {
      return sendError(
        req,
        reply,
        422,
        'idempotency_key_reused',
        'this Idempotency-Key was used for a different request (method, path or body); use a new key for a new request',
      );
    }
    if (existing.status === null) {
      reply.header('retry-after', '1');
      return sendError(
        req,
        reply,
        409,
        'idempotency_key_in_flight',
        'a request with this Idempotency-Key is still being processed; retry after it finished (if the service stopped while it ran, reconcile and use a new key)',
      );
    }
    const stored = existing.response as { body: unknown; headers?: Record<string, string> } | null;
    for (const [k, v] of Object.entries(stored?.headers ?? {})) reply.header(k, v);
    reply.header('idempotent-replayed', 'true');
    // Sent as the exact stored JSON: a replay repeats the first answer, it is not re-shaped by the route's schema.
    return reply
      .code(existing.status)
      .type('application/json')
      .serializer((v) => (typeof v === 'string' ? v : JSON.stringify(v)))
      .send(JSON.stringify(stored?.body ?? null));
  };

  const onSend = async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const claim = req.idempotency;
    if (!claim) return payload;
    req.idempotency = undefined;
    try {
      // A rate-limit answer means the request was not served: the client may retry it with the same key. So does
      // a 503 with Retry-After: only ever answered when nothing was sent (no worker holds the Master now, or its
      // lease ran out before the write left; see remote-orders.ts and OrderService.placeFenced).
      if (reply.statusCode === 429 || (reply.statusCode === 503 && reply.getHeader('retry-after') !== undefined)) {
        await repo.release(claim.userId, claim.key);
        return payload;
      }
      let body: unknown = null;
      if (SECRET_RESPONSE_ROUTES.has(req.routeOptions.url ?? '')) {
        // A secret is shown once and stored only sealed where it belongs; a replay says where it went.
        body = {
          code: 'secret_shown_once',
          error:
            'this request already succeeded; its secret was shown in the first answer and is not stored again (rotate it to get a new one)',
        };
      } else if (typeof payload === 'string') {
        // Stored as jsonb: text PostgreSQL refuses would fail the write and leave the key in flight for good.
        try {
          body = storableJson(JSON.parse(payload));
        } catch {
          body = storableText(payload);
        }
      }
      const headers: Record<string, string> = {};
      for (const h of KEPT_HEADERS) {
        const v = reply.getHeader(h);
        if (v !== undefined) headers[h] = String(v);
      }
      // Awaited before the answer leaves: a client that retries the moment it has it must find it stored.
      await repo.complete(claim.userId, claim.key, reply.statusCode, { body, headers });
    } catch (err) {
      // The key stays in flight (409) rather than free: the handler did act, and a rerun could duplicate it.
      opts.onError?.(err);
    }
    return payload;
  };

  // On the write routes of the prefixes only, as those routes' own hooks: a read never pays for two hooks that
  // have nothing to do (each an async call and a turn of the microtask queue per request; issue 12). No route
  // has hooks of these two kinds of its own, and the request records' onSend (global) runs first, as before.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => honoursIdempotencyKey(m, route.url, opts.prefixes))) return;
    route.preHandler = [...hooksOf(route.preHandler), preHandler as preHandlerAsyncHookHandler];
    route.onSend = [...hooksOf(route.onSend), onSend as onSendAsyncHookHandler];
  });
}

const hooksOf = <T>(h: T | T[] | undefined): T[] => (h === undefined ? [] : Array.isArray(h) ? h : [h]);
