import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { invalid } from '../../domain/errors.js';
import { ownedAccount, type ApiDeps } from '../deps.js';
import { userOf } from '../plugins/auth.js';
import { limitsJson } from '../plugins/rate-limit.js';
import { AccountIdParams, AccountSchema, RateLimitsSchema, CapabilitiesSchema, OPEN, OrderSchema, PositionSchema, stdErrors, toAccountJson, toCapabilitiesJson, toOrderJson, toPositionJson } from '../schemas.js';
import { parseTimeParam } from '../time-params.js';
import type { RouteOpts } from './route-opts.js';

export async function accountRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;
  const tags = ['Accounts'];

  r.get(`${prefix}/me`, {
    onRequest: auth,
    schema: { operationId: 'getMe', hide, tags, security, ...OPEN, summary: "The caller's profile", response: { 200: Type.Object({ id: Type.String(), email: Type.String(), createdAt: Type.String(), credential: Type.Object({ kind: Type.String(), id: Type.String(), rateLimits: RateLimitsSchema }) }), ...stdErrors() } },
  }, async (req) => {
    const u = (await deps.store.users.byId(userOf(req)))!;
    const p = req.principal!;
    return { id: u.id, email: u.email, createdAt: u.createdAt.toISOString(), credential: { kind: p.credentialKind, id: p.credentialId, rateLimits: limitsJson(deps.v1Limits, p.limits) } };
  });

  r.get(`${prefix}/accounts`, {
    onRequest: auth,
    schema: { operationId: 'listAccounts', hide, tags, security, summary: "The caller's accounts on every platform, with role, status and health", response: { 200: Type.Object({ accounts: Type.Array(AccountSchema) }), ...stdErrors() } },
  }, async (req) => ({ accounts: (await deps.store.accounts.list(userOf(req))).map(toAccountJson) }));

  r.get(`${prefix}/accounts/:account_id`, {
    onRequest: auth,
    schema: { operationId: 'getAccount', hide, tags, security, ...OPEN, params: AccountIdParams, response: { 200: AccountSchema, ...stdErrors() } },
  }, async (req) => toAccountJson(await ownedAccount(deps, userOf(req), req.params.account_id)));

  r.get(`${prefix}/accounts/:account_id/capabilities`, {
    onRequest: auth,
    schema: { operationId: 'getAccountCapabilities', hide, tags, security, ...OPEN, params: AccountIdParams, response: { 200: CapabilitiesSchema, ...stdErrors() } },
  }, async (req) => {
    const a = await ownedAccount(deps, userOf(req), req.params.account_id);
    return toCapabilitiesJson(deps.adapters.capabilities(a.platform) ?? (await deps.adapters.forAccount(a)).capabilities);
  });

  r.get(`${prefix}/accounts/:account_id/positions`, {
    onRequest: auth,
    schema: { operationId: 'listAccountPositions', hide, tags, security, ...OPEN, summary: 'Open positions of any account of the caller, read from its broker', params: AccountIdParams, response: { 200: Type.Object({ positions: Type.Array(PositionSchema) }), ...stdErrors(409, 502, 503) } },
  }, async (req) => {
    const a = await ownedAccount(deps, userOf(req), req.params.account_id);
    return { positions: (await (await deps.adapters.forAccount(a)).listPositions()).map(toPositionJson) };
  });

  r.get(`${prefix}/accounts/:account_id/orders`, {
    onRequest: auth,
    schema: {
      operationId: 'listAccountOrders', hide, tags, security, ...OPEN, summary: 'Pending orders (and with history=true final ones) of any account of the caller',
      params: AccountIdParams,
      querystring: Type.Object({ from: Type.Optional(Type.String({ maxLength: 40 })), to: Type.Optional(Type.String({ maxLength: 40 })), symbol: Type.Optional(Type.String({ maxLength: 32 })), history: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])) }, { additionalProperties: false }),
      response: { 200: Type.Object({ orders: Type.Array(OrderSchema) }), ...stdErrors(409, 502, 503) },
    },
  }, async (req) => {
    const a = await ownedAccount(deps, userOf(req), req.params.account_id);
    const from = parseTimeParam(req.query.from, 'from');
    const to = parseTimeParam(req.query.to, 'to');
    if (from && to && from > to) throw invalid('from must not be after to');
    const orders = await (await deps.adapters.forAccount(a)).listOrders({ includeHistory: req.query.history === 'true', ...(from ? { from } : {}), ...(to ? { to } : {}), ...(req.query.symbol ? { symbol: req.query.symbol } : {}) });
    return { orders: orders.map(toOrderJson) };
  });
}
