import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { notFound } from '../../domain/errors.js';
import type { ApiDeps } from '../deps.js';
import { requireAuth, userOf } from '../plugins/auth.js';
import { OPEN, stdErrors } from '../schemas.js';

const ApiKeySchema = Type.Object({
  id: Type.String(), name: Type.String(), prefix: Type.String({ description: 'first characters, to tell keys apart' }),
  createdAt: Type.String(), expiresAt: Type.Union([Type.String(), Type.Null()]), revokedAt: Type.Union([Type.String(), Type.Null()]),
  lastUsedAt: Type.Union([Type.String(), Type.Null()]), replacedBy: Type.Union([Type.String(), Type.Null()]),
  state: Type.String({ description: 'active, expiring (rotated, inside its overlap window), expired or revoked' }),
});
const iso = (d: Date | null) => d?.toISOString() ?? null;
const keyJson = (k: { id: string; name: string; displayPrefix: string; createdAt: Date; expiresAt: Date | null; revokedAt: Date | null; lastUsedAt: Date | null; replacedBy: string | null }) => ({
  id: k.id, name: k.name, prefix: k.displayPrefix, createdAt: k.createdAt.toISOString(), expiresAt: iso(k.expiresAt), revokedAt: iso(k.revokedAt),
  lastUsedAt: iso(k.lastUsedAt), replacedBy: k.replacedBy,
  state: k.revokedAt ? 'revoked' : k.expiresAt ? (k.expiresAt > new Date() ? 'expiring' : 'expired') : 'active',
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

  r.post('/app/sign-in', {
    schema: {
      operationId: 'signIn', tags, security: [], ...OPEN, summary: 'Exchange email and password for an access token (family R and the dashboard)',
      body: Type.Object({ email: Type.String({ minLength: 3, maxLength: 254 }), password: Type.String({ minLength: 1, maxLength: 1024 }) }, { additionalProperties: false }),
      response: { 200: Type.Object({ accessToken: Type.String({ description: 'shown once; store it safely' }), tokenType: Type.Literal('Bearer'), expiresAt: Type.String(), userId: Type.String() }), ...stdErrors() },
    },
  }, async (req) => {
    const t = await deps.auth.signIn(req.body.email, req.body.password);
    return { accessToken: t.accessToken, tokenType: 'Bearer' as const, expiresAt: t.expiresAt.toISOString(), userId: t.userId };
  });

  r.post('/app/sign-out', {
    onRequest: auth,
    schema: { operationId: 'signOut', tags, security, ...OPEN, summary: 'Revoke the access token this request carries', response: { 204: Type.Null(), ...stdErrors() } },
  }, async (req, reply) => {
    await deps.auth.revokeToken(userOf(req), req.principal!.credentialId);
    return reply.code(204).send(null);
  });

  r.get('/app/api-keys', {
    onRequest: auth,
    schema: { operationId: 'listApiKeys', tags, security, ...OPEN, summary: "The caller's API keys (prefix, state, dates; never the key itself)", response: { 200: Type.Object({ keys: Type.Array(ApiKeySchema) }), ...stdErrors() } },
  }, async (req) => ({ keys: (await deps.auth.listApiKeys(userOf(req))).map(keyJson) }));

  r.post('/app/api-keys', {
    onRequest: auth,
    schema: {
      operationId: 'createApiKey', tags, security, ...OPEN, summary: 'Create an API key for family V; the key is shown once',
      body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
      response: { 201: Type.Object({ key: ApiKeySchema, apiKey: Type.String({ description: 'shown once' }) }), ...stdErrors() },
    },
  }, async (req, reply) => {
    const { key, apiKey } = await deps.auth.createApiKey(userOf(req), req.body.name);
    reply.code(201);
    return { key: keyJson(key), apiKey };
  });

  r.post('/app/api-keys/:key_id/rotate', {
    onRequest: auth,
    schema: {
      operationId: 'rotateApiKey', tags, security, ...OPEN, summary: 'Replace a key; the old one keeps working for the overlap window',
      params: KeyParams,
      body: Type.Optional(Type.Object({ overlapSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 30 * 86400 })) }, { additionalProperties: false })),
      response: { 201: Type.Object({ key: ApiKeySchema, apiKey: Type.String(), previousKeyExpiresAt: Type.String() }), ...stdErrors() },
    },
  }, async (req, reply) => {
    const res = await deps.auth.rotateApiKey(userOf(req), req.params.key_id, req.body?.overlapSeconds);
    if (!res) throw notFound('API key');
    reply.code(201);
    return { key: keyJson(res.key), apiKey: res.apiKey, previousKeyExpiresAt: res.previousExpiresAt.toISOString() };
  });

  r.delete('/app/api-keys/:key_id', {
    onRequest: auth,
    schema: { operationId: 'revokeApiKey', tags, security, ...OPEN, summary: 'Revoke an API key at once', params: KeyParams, response: { 204: Type.Null(), ...stdErrors() } },
  }, async (req, reply) => {
    if (!(await deps.auth.revokeApiKey(userOf(req), req.params.key_id))) throw notFound('API key');
    return reply.code(204).send(null);
  });
}
