import { honoursIdempotencyKey, MAX_KEY_LENGTH } from './plugins/idempotency.js';
import { ErrorBody } from './schemas.js';

/**
 * The document's side of answers no route declares itself because a plugin or Fastify gives them, for any
 * route (issue 46, finding 8: a client generated from the document met 3 of 95 answers it did not describe):
 * - Idempotency-Key on every write the idempotency plugin serves: the header parameter, 422
 *   `idempotency_key_reused`, 409 `idempotency_key_in_flight` (Retry-After) and `Idempotent-Replayed` on
 *   every answer a replay can repeat;
 * - 413 and 415 wherever a body is read (Fastify reads one for every write method), 414 wherever the path
 *   has a parameter (find-my-way refuses an over-long one before routing);
 * - 503 `store_unavailable` with Retry-After on every operation that reads the store;
 * - 429 where the route can refuse for a rate (all but the public probes and the OAuth callback).
 * Applied to the finished document, like documentRateLimits: one place, every route, a new route included.
 */

type Responses = Record<string, Record<string, unknown>>;
interface Operation {
  parameters?: Array<Record<string, unknown>>;
  responses?: Responses;
  [k: string]: unknown;
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];
/** Answer without the store, a rate or a body: the process probes (documented by their own routes). */
const NO_STORE = new Set(['/healthz', '/readyz']);
/** Served to a browser popup: no rate limit, sessions in memory. */
const OAUTH_CALLBACK = '/api/connect/platformc/callback';
/** Refused before the idempotency plugin looks (so no stored answer of theirs is ever replayed). */
const NEVER_REPLAYED = new Set(['401', '413', '414', '415', '429']);

const RETRY_AFTER = { description: 'seconds to wait before retrying', schema: { type: 'integer' } };
const errorJson = () => ({ 'application/json': { schema: structuredClone(ErrorBody) } });

const COMMON: Record<string, string> = {
  '413': 'the body is larger than the limit (code payload_too_large)',
  '414': 'a path parameter is longer than any id can be (code uri_too_long)',
  '415': 'the body is not application/json (code unsupported_media_type)',
  '429': 'too many requests (code rate_limited): wait Retry-After seconds',
};
const STORE_UNAVAILABLE =
  'the service cannot reach its store right now (code store_unavailable): retry after Retry-After seconds';

function ensure(op: Operation, code: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  op.responses ??= {};
  const res = (op.responses[code] ??= { description: COMMON[code] ?? '', content: errorJson() });
  // A route's own schema left Fastify's placeholder description: say what the code means here.
  if (res.description === 'Default Response' || res.description === '') res.description = COMMON[code] ?? '';
  Object.assign(res, extra);
  return res;
}

/** A meaning added to a code: the route's own first (it declared the code for a reason of its own), then this one. */
function also(op: Operation, code: string, meaning: string): Record<string, unknown> {
  const own = op.responses?.[code]?.description as string | undefined;
  const res = ensure(op, code);
  res.description = own && own !== 'Default Response' ? `${own}; or ${meaning}` : meaning;
  return res;
}

function idempotencyOf(op: Operation): void {
  op.parameters = [
    ...(op.parameters ?? []),
    {
      in: 'header',
      name: 'Idempotency-Key',
      required: false,
      description:
        'any string the client chooses (a UUID, say), scoped to the caller and kept 24 h: the same key with the same method, path and body returns the first answer again (Idempotent-Replayed: true) instead of acting twice; with another request it is a 422',
      schema: { type: 'string', minLength: 1, maxLength: MAX_KEY_LENGTH },
      'x-open-point': true,
    },
  ];
  also(
    op,
    '422',
    'this Idempotency-Key was used for a different request: method, path or body (code idempotency_key_reused)',
  );
  const r409 = also(
    op,
    '409',
    'a request with this Idempotency-Key is still running (code idempotency_key_in_flight): retry after Retry-After',
  );
  r409.headers = { ...((r409.headers as object) ?? {}), 'Retry-After': RETRY_AFTER };
  for (const [code, res] of Object.entries(op.responses ?? {})) {
    if (NEVER_REPLAYED.has(code)) continue;
    res.headers = {
      ...((res.headers as object) ?? {}),
      'Idempotent-Replayed': {
        description: 'true when this is the stored answer of an earlier request with the same Idempotency-Key',
        schema: { type: 'string', enum: ['true'] },
        'x-open-point': true,
      },
    };
  }
}

export function documentCommonAnswers(doc: Record<string, unknown>): void {
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Record<string, Operation>>)) {
    if (NO_STORE.has(path)) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (!op?.responses) continue;
      const write = method !== 'get';
      if (write) {
        ensure(op, '413');
        ensure(op, '415');
      }
      if (path.includes('{')) ensure(op, '414');
      if (path === OAUTH_CALLBACK) continue;
      ensure(op, '429');
      // A route that lists 503 itself does so for its broker (stdErrors gives it no words of its own).
      const upstream = op.responses['503']
        ? 'a broker or the worker did not answer (code upstream_unavailable); or '
        : '';
      const r503 = also(op, '503', `${upstream}${STORE_UNAVAILABLE}`);
      r503.headers = { ...((r503.headers as object) ?? {}), 'Retry-After': RETRY_AFTER };
      // Last: the replay header goes on every answer listed by now.
      if (honoursIdempotencyKey(method, path)) idempotencyOf(op);
    }
  }
}
