import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { newId } from '../../domain/ids.js';
import { loggablePath } from '../../config/log-url.js';
import type { Store } from '../../store/store.js';
import { storableJson, storableText } from '../text-safety.js';

const WRITE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Responses holding a secret shown once: never stored (request records, idempotent replays). */
export const SECRET_RESPONSE_ROUTES = new Set([
  '/app/sign-in',
  '/app/password',
  '/app/api-keys',
  '/app/api-keys/:key_id/rotate',
  ...['/v1', '/app/v1'].flatMap((p) => [`${p}/webhook-endpoints`, `${p}/webhook-endpoints/:endpoint_id/rotate-secret`]),
]);
const MAX_STORED_RESPONSE = 16_384;

declare module 'fastify' {
  interface FastifyRequest {
    recordedResponse?: unknown;
  }
}

/**
 * Every request on both families is recorded (id, time, caller, route, status; for writes the body digest
 * and the response) so a user can reconcile what they sent against what the brokers did. Writing the
 * record never delays or fails the response.
 */
export function requestRecords(app: FastifyInstance, store: Store, onError: (err: unknown) => void): void {
  // Callback hooks: a read passes both with no promise and no turn of the microtask queue (issue 12).
  app.addHook('onSend', (req, _reply, payload, done) => {
    if (
      WRITE.has(req.method) &&
      typeof payload === 'string' &&
      payload.length <= MAX_STORED_RESPONSE &&
      !SECRET_RESPONSE_ROUTES.has(req.routeOptions.url ?? '')
    ) {
      try {
        req.recordedResponse = storableJson(JSON.parse(payload));
      } catch {
        req.recordedResponse = null;
      }
    }
    done(null, payload);
  });
  app.addHook('onResponse', (req, reply, done) => {
    record(req, reply);
    done();
  });

  function record(req: FastifyRequest, reply: FastifyReply): void {
    const route = req.routeOptions.url;
    // The API families and the dashboard's own routes; not the dashboard's files, the documents or health probes.
    if (!route || !/^\/(api|v1|app)(\/|$)/.test(route)) return;
    // Whatever the body was, the record is written: a write the service acted on must stay traceable.
    try {
      const body = WRITE.has(req.method) && req.body !== undefined ? serialised(req.body) : null;
      const key = req.headers['idempotency-key'];
      store.requests.enqueue(
        {
          id: req.id,
          userId: req.principal?.userId ?? null,
          credentialKind: req.principal?.credentialKind ?? null,
          credentialId: req.principal?.credentialId ?? null,
          method: req.method,
          route,
          path: storableText(loggablePath(req.originalUrl.split('?')[0]!)),
          status: reply.statusCode,
          // No digest of a body that carries a password: with the other fields known, it would allow offline guessing.
          bodyDigest:
            body && !route.startsWith('/app/sign-in') && route !== '/app/password' && !route.startsWith('/api/connect/')
              ? createHash('sha256').update(body).digest('hex')
              : null,
          response: req.recordedResponse ?? null,
          durationMs: reply.elapsedTime.toFixed(3),
          idempotencyKey: typeof key === 'string' ? storableText(key) : null,
        },
        onError,
      );
    } catch (err) {
      onError(err);
    }
  }
}

/** The body as JSON for its digest; a body JSON cannot express (or too deep to walk) is digested as a marker. */
function serialised(body: unknown): string {
  try {
    return JSON.stringify(body) ?? 'undefined';
  } catch {
    return '[unserialisable body]';
  }
}

export const newRequestId = () => newId('req');
