import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../auth/auth-service.js';
import { RateBucketsRepo, type BucketPolicy, type BucketState } from '../../store/repos/rate-buckets.js';
import type { Store } from '../../store/store.js';
import { sendError } from '../errors.js';
import { MemoryBuckets } from './memory-buckets.js';

/** Family V's default limits: requests per window for writes and for reads (0 = that class is not limited). */
export interface V1Limits {
  writes: number;
  reads: number;
  windowSec: number;
}

type LimitClass = 'writes' | 'reads';

/** The limit of one class that applies to a caller: its key's dedicated one where the operator set it, else the default. */
function effectiveLimit(
  defaults: V1Limits,
  principal: Pick<Principal, 'limits'>,
  cls: LimitClass,
): BucketPolicy | null {
  const quota = principal.limits?.[cls] ?? defaults[cls];
  return quota > 0 ? { quota, windowSec: defaults.windowSec } : null;
}

/** What a key's owner sees of its limits (the key list, /v1/me): null = that class is not limited. */
export function limitsJson(defaults: V1Limits, limits: Principal['limits']) {
  const one = (n: number | null | undefined, dflt: number) => {
    const quota = n ?? dflt;
    return quota > 0 ? { quota, windowSec: defaults.windowSec, dedicated: n !== null && n !== undefined } : null;
  };
  return { writes: one(limits?.writes, defaults.writes), reads: one(limits?.reads, defaults.reads) };
}

/**
 * Emergency routes: a panic-close is never refused for the write limit (it takes nothing from the bucket and
 * still reports it). A flood of them cannot pile up work: a start while a job runs returns that job.
 */
const NEVER_REFUSED = new Set(['/v1/accounts/:account_id/panic-close', '/v1/copier-groups/:group_id/panic-close']);

const classOf = (method: string): LimitClass => (method === 'GET' || method === 'HEAD' ? 'reads' : 'writes');

/**
 * One token bucket per API key (per user for the dashboard's access tokens) and class: in the store on
 * PostgreSQL so several API processes share it, in memory on the embedded store (one process). Every answer
 * of a limited route carries the IETF RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers:
 * structured fields, `q` quota, `w` window, `r` remaining, `t` seconds until the bucket is full again); a
 * refusal is 429 `rate_limited` with Retry-After (seconds until one token is back).
 */
export function rateLimiter(app: FastifyInstance, store: Store, defaults: V1Limits) {
  // Embedded store: one process by its lock file, so memory is exact; PostgreSQL: processes share the store's buckets.
  const memory = store.database.kind === 'pglite' ? new MemoryBuckets() : null;
  const repo = memory ?? new RateBucketsRepo(store.database.db);
  const idleMs = Math.max(defaults.windowSec * 1000 * 2, 3600_000);
  const purge = setInterval(
    () =>
      void repo
        .purgeIdle(new Date(Date.now() - idleMs))
        .catch((err: unknown) => app.log.error({ err }, 'rate buckets not purged')),
    idleMs,
  );
  purge.unref();
  app.addHook('onClose', async () => clearInterval(purge));

  /**
   * Runs after authentication; answers 429 itself and says so (true) when the caller is over its limit. On the
   * embedded store the answer is synchronous (a boolean, no promise), as this runs on every request of family V.
   */
  return function limit(req: FastifyRequest, reply: FastifyReply): boolean | Promise<boolean> {
    const principal = req.principal;
    if (!principal) return false;
    const cls = classOf(req.method);
    const policy = effectiveLimit(defaults, principal, cls);
    if (!policy) return false;
    const cost = cls === 'writes' && NEVER_REFUSED.has(req.routeOptions.url ?? '') ? 0 : 1;
    // A rotated key in its overlap spends its successor's budget: a rotation is no second bucket (issue 46).
    const owner =
      principal.credentialKind === 'api_key'
        ? `key:${principal.rateKey ?? principal.credentialId}`
        : `usr:${principal.userId}`;
    const bucket = `${owner}:${cls}`;
    if (memory) return answer(req, reply, principal, cls, policy, memory.takeNow(bucket, policy, cost));
    return repo.take(bucket, policy, cost).then((state) => answer(req, reply, principal, cls, policy, state));
  };
}

/** The limit headers on every answer; a refusal is answered here (true). */
function answer(
  req: FastifyRequest,
  reply: FastifyReply,
  principal: Principal,
  cls: LimitClass,
  policy: BucketPolicy,
  state: BucketState,
): boolean | Promise<boolean> {
  const rate = policy.quota / policy.windowSec;
  const tokens = Math.max(0, state.tokens);
  reply.header('ratelimit-policy', `"${cls}";q=${policy.quota};w=${policy.windowSec}`);
  reply.header('ratelimit', `"${cls}";r=${Math.floor(tokens)};t=${Math.ceil((policy.quota - tokens) / rate - 1e-9)}`);
  if (state.allowed) return false;
  const retryAfter = Math.max(1, Math.ceil((1 - tokens) / rate));
  reply.header('retry-after', String(retryAfter));
  return refuse(
    req,
    reply,
    `over the ${cls} limit of ${policy.quota} requests per ${policy.windowSec} s for this ${principal.credentialKind === 'api_key' ? 'API key' : 'user'}; retry in ${retryAfter} s`,
    retryAfter,
  );
}

async function refuse(req: FastifyRequest, reply: FastifyReply, message: string, retryAfter: number): Promise<true> {
  await sendError(req, reply, 429, 'rate_limited', message, { retryAfter });
  return true;
}

const header = (description: string, example: string) => ({
  description,
  schema: { type: 'string' },
  example,
  'x-open-point': true,
});
const LIMIT_HEADERS = {
  'RateLimit-Policy': header(
    'the quota policy of this request\'s class (draft-ietf-httpapi-ratelimit-headers): "writes" or "reads", q = requests per window, w = window in seconds; the numbers are our choice (open point 14), a key may have dedicated ones',
    '"writes";q=60;w=60',
  ),
  RateLimit: header(
    'where the caller stands: r = requests left now, t = seconds until the bucket is full again (it refills evenly over the window)',
    '"writes";r=59;t=1',
  ),
};
const RETRY_AFTER = {
  description: 'seconds until the next request of this class is served',
  schema: { type: 'integer' },
};

/**
 * The document's side of the limits: every answer of a family V operation carries the two fields, and each
 * operation lists the 429 with Retry-After. Applied to the finished document (one place, every route).
 */
export function documentRateLimits(doc: Record<string, unknown>): void {
  const paths = (doc.paths ?? {}) as Record<
    string,
    Record<
      string,
      { responses?: Record<string, { headers?: Record<string, unknown>; description?: string; content?: unknown }> }
    >
  >;
  for (const [path, ops] of Object.entries(paths)) {
    // Sign-in and password change answer 429 with Retry-After while an account or address must wait.
    if (path === '/app/sign-in' || path === '/app/password') {
      for (const op of Object.values(ops)) {
        const r429 = op?.responses?.['429'];
        if (r429)
          Object.assign(r429, {
            description:
              'too many failed sign-ins for this account or from this address (code rate_limited): wait Retry-After seconds',
            headers: { 'Retry-After': RETRY_AFTER },
          });
      }
      continue;
    }
    if (!path.startsWith('/v1/')) continue;
    for (const op of Object.values(ops)) {
      if (!op || typeof op !== 'object' || !op.responses) continue;
      // stdErrors() lists 429 on nearly every route; one that does not gets the body of its other errors.
      const errorBody = Object.entries(op.responses).find(([c]) => Number(c) >= 400)?.[1]?.content;
      op.responses['429'] ??= { description: '', ...(errorBody ? { content: errorBody } : {}) };
      for (const [code, res] of Object.entries(op.responses)) {
        if (code === '401') continue;
        res.headers = {
          ...(res.headers ?? {}),
          ...LIMIT_HEADERS,
          ...(code === '429' ? { 'Retry-After': RETRY_AFTER } : {}),
        };
        // A route that answers 429 for more than the rate limit (the order route) says so in its own words.
        if (code === '429' && !res.description?.includes('rate_limited'))
          res.description = 'over the rate limit (code rate_limited): wait Retry-After seconds';
        // Such a 429 is our choice (slaves_backlogged): its mark goes on the response, not only on its body.
        const body = (res.content as { 'application/json'?: { schema?: Record<string, unknown> } } | undefined)?.[
          'application/json'
        ]?.schema;
        if (code === '429' && body?.['x-open-point']) Object.assign(res, { 'x-open-point': true });
      }
    }
  }
}
