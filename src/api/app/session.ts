import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { notFound } from '../../domain/errors.js';
import type { ApiDeps } from '../deps.js';
import { requireAuth, userOf } from '../plugins/auth.js';
import { enforceQuota, QUOTA_NOTE } from '../quotas.js';
import { finishPage, NextCursor, pageQuery, readPage } from '../paging.js';
import { API_KEYS_PAGE } from '../page-specs.js';
import { OPEN, RateLimitsSchema, stdErrors } from '../schemas.js';
import { limitsJson, type V1Limits } from '../plugins/rate-limit.js';
import type { ApiKeyRow } from '../../store/repos/credentials.js';

const ApiKeySchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: 'first characters, to tell keys apart' }),
  createdAt: Type.String(),
  expiresAt: Type.Union([Type.String(), Type.Null()]),
  revokedAt: Type.Union([Type.String(), Type.Null()]),
  lastUsedAt: Type.Union([Type.String(), Type.Null()]),
  replacedBy: Type.Union([Type.String(), Type.Null()]),
  state: Type.String({ description: 'active, expiring (rotated, inside its overlap window), expired or revoked' }),
  rateLimits: RateLimitsSchema,
});
const iso = (d: Date | null) => d?.toISOString() ?? null;
const keyJson = (limits: V1Limits) => (k: ApiKeyRow) => ({
  id: k.id,
  name: k.name,
  prefix: k.displayPrefix,
  createdAt: k.createdAt.toISOString(),
  expiresAt: iso(k.expiresAt),
  revokedAt: iso(k.revokedAt),
  lastUsedAt: iso(k.lastUsedAt),
  replacedBy: k.replacedBy,
  state: k.revokedAt ? 'revoked' : k.expiresAt ? (k.expiresAt > new Date() ? 'expiring' : 'expired') : 'active',
  rateLimits: limitsJson(limits, { writes: k.rateLimitWrites, reads: k.rateLimitReads }),
});
const KeyParams = Type.Object({ key_id: Type.String({ minLength: 1, maxLength: 64 }) });

/**
 * The dashboard's own routes (/app): sign-in that issues family R access tokens, and API key management
 * for family V. How tokens are issued and keys rotated is left open by the spec: these are our choices.
 */
export async function sessionRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const auth = requireAuth(deps.auth, 'access_token');
  const security = [{ accessToken: [] }];
  const tags = ['Session and API keys'];
  const keyOut = keyJson(deps.v1Limits);

  r.post(
    '/app/sign-in',
    {
      schema: {
        operationId: 'signIn',
        tags,
        security: [],
        ...OPEN,
        summary: 'Exchange email and password for an access token (family R and the dashboard)',
        body: Type.Object(
          {
            email: Type.String({ minLength: 3, maxLength: 254 }),
            password: Type.String({ minLength: 1, maxLength: 1024 }),
          },
          { additionalProperties: false },
        ),
        description:
          'With a second factor on (docs/people.md) the answer carries no token but `secondFactorRequired` and a `challenge`: send it with a code to POST /app/sign-in/second-factor within 5 minutes.',
        response: {
          200: Type.Union([
            Type.Object({
              accessToken: Type.String({ description: 'shown once; store it safely' }),
              tokenType: Type.Literal('Bearer'),
              expiresAt: Type.String(),
              userId: Type.String(),
            }),
            Type.Object(
              {
                secondFactorRequired: Type.Literal(true),
                challenge: Type.String({ description: 'single use; answer it with a code' }),
                expiresAt: Type.String(),
                userId: Type.String(),
              },
              OPEN,
            ),
          ]),
          ...stdErrors(),
        },
      },
    },
    async (req) => {
      // req.ip is the peer's address: behind a reverse proxy every client shares the proxy's (see open-points.md).
      const t = await deps.auth.signIn(req.body.email, req.body.password, req.ip);
      if ('challenge' in t)
        return {
          secondFactorRequired: true as const,
          challenge: t.challenge,
          expiresAt: t.expiresAt.toISOString(),
          userId: t.userId,
        };
      return {
        accessToken: t.accessToken,
        tokenType: 'Bearer' as const,
        expiresAt: t.expiresAt.toISOString(),
        userId: t.userId,
      };
    },
  );

  r.post(
    '/app/password',
    {
      onRequest: auth,
      schema: {
        operationId: 'changePassword',
        tags,
        security,
        ...OPEN,
        summary:
          "Change the signed-in user's password; every access token of the user is revoked and a new one returned",
        description:
          'Wrong current passwords count like failed sign-ins (the same growing waits, 429 with Retry-After, a user.sign_in_failed event). API keys are revoked too when `revokeApiKeys` is true (do that when the old password may have leaked: whoever had it could have created keys); otherwise they keep working.',
        body: Type.Object(
          {
            currentPassword: Type.String({ minLength: 1, maxLength: 1024 }),
            newPassword: Type.String({ minLength: 8, maxLength: 1024 }),
            revokeApiKeys: Type.Optional(
              Type.Boolean({
                ...OPEN,
                default: false,
                description: 'also revoke every API key of the user (rotated ones in their overlap too)',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            accessToken: Type.String({ description: 'shown once; the one this request carried no longer works' }),
            tokenType: Type.Literal('Bearer'),
            expiresAt: Type.String(),
            tokensRevoked: Type.Integer(),
            apiKeysRevoked: Type.Integer({ ...OPEN, description: 'API keys revoked (0 unless revokeApiKeys)' }),
          }),
          ...stdErrors(),
        },
      },
    },
    async (req) => {
      const t = await deps.auth.changePassword(userOf(req), req.body.currentPassword, req.body.newPassword, req.ip, {
        revokeApiKeys: req.body.revokeApiKeys ?? false,
      });
      return {
        accessToken: t.accessToken,
        tokenType: 'Bearer' as const,
        expiresAt: t.expiresAt.toISOString(),
        tokensRevoked: t.tokensRevoked,
        apiKeysRevoked: t.apiKeysRevoked,
      };
    },
  );

  r.post(
    '/app/sign-out',
    {
      onRequest: auth,
      schema: {
        operationId: 'signOut',
        tags,
        security,
        ...OPEN,
        summary: 'Revoke the access token this request carries',
        response: { 204: Type.Null(), ...stdErrors() },
      },
    },
    async (req, reply) => {
      await deps.auth.revokeToken(userOf(req), req.principal!.credentialId);
      return reply.code(204).send(null);
    },
  );

  r.get(
    '/app/api-keys',
    {
      onRequest: auth,
      schema: {
        operationId: 'listApiKeys',
        tags,
        security,
        ...OPEN,
        summary: 'API keys, newest first (revoked and expired ones too)',
        querystring: Type.Object(pageQuery(API_KEYS_PAGE), { additionalProperties: false }),
        response: { 200: Type.Object({ keys: Type.Array(ApiKeySchema), nextCursor: NextCursor }), ...stdErrors() },
      },
    },
    async (req, reply) => {
      const page = readPage(req.query, API_KEYS_PAGE);
      const rows = await deps.auth.listApiKeys(userOf(req), { after: page.after, limit: page.limit + 1 });
      const { items, nextCursor } = finishPage(req, reply, rows, page, API_KEYS_PAGE, (k) => k.id);
      return { keys: items.map(keyOut), nextCursor };
    },
  );

  r.post(
    '/app/api-keys',
    {
      onRequest: auth,
      schema: {
        operationId: 'createApiKey',
        tags,
        security,
        ...OPEN,
        summary: 'Create an API key for family V; the key is shown once',
        description: QUOTA_NOTE(
          'apiKeys',
          'API_KEYS',
          'every key that works counts, a rotated key in its overlap window too',
        ),
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
        response: {
          201: Type.Object({ key: ApiKeySchema, apiKey: Type.String({ description: 'shown once' }) }),
          ...stdErrors(409),
        },
      },
    },
    async (req, reply) => {
      enforceQuota(deps.quotas, 'apiKeys', await deps.store.credentials.countActiveApiKeys(userOf(req)));
      const { key, apiKey } = await deps.auth.createApiKey(userOf(req), req.body.name);
      reply.code(201);
      return { key: keyOut(key), apiKey };
    },
  );

  r.post(
    '/app/api-keys/:key_id/rotate',
    {
      onRequest: auth,
      schema: {
        operationId: 'rotateApiKey',
        tags,
        security,
        ...OPEN,
        summary: 'Replace a key; the old one keeps working for the overlap window',
        description:
          `The old key keeps working for \`overlapSeconds\` (default and maximum ${deps.auth.maxOverlapSec} s, COPYTRADE_API_KEY_OVERLAP_SEC), ` +
          "counts toward the key quota meanwhile and spends the new key's rate budget (it is no second bucket). " +
          "A lineage has one old key at most: rotating the new key ends the old one's overlap at once. A key already rotated is 409 (rotate its replacement). " +
          'Revoking the new key revokes the old one too.',
        params: KeyParams,
        body: Type.Optional(
          Type.Object(
            {
              overlapSeconds: Type.Optional(Type.Integer({ ...OPEN, minimum: 0, maximum: deps.auth.maxOverlapSec })),
            },
            { additionalProperties: false },
          ),
        ),
        response: {
          201: Type.Object({ key: ApiKeySchema, apiKey: Type.String(), previousKeyExpiresAt: Type.String() }),
          ...stdErrors(409),
        },
      },
    },
    async (req, reply) => {
      const res = await deps.auth.rotateApiKey(userOf(req), req.params.key_id, req.body?.overlapSeconds);
      if (!res) throw notFound('API key');
      reply.code(201);
      return { key: keyOut(res.key), apiKey: res.apiKey, previousKeyExpiresAt: res.previousExpiresAt.toISOString() };
    },
  );

  r.delete(
    '/app/api-keys/:key_id',
    {
      onRequest: auth,
      schema: {
        operationId: 'revokeApiKey',
        tags,
        security,
        ...OPEN,
        summary: 'Revoke an API key at once',
        params: KeyParams,
        response: { 204: Type.Null(), ...stdErrors() },
      },
    },
    async (req, reply) => {
      if (!(await deps.auth.revokeApiKey(userOf(req), req.params.key_id))) throw notFound('API key');
      return reply.code(204).send(null);
    },
  );
}
