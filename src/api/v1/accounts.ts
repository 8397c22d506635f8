import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { invalid } from '../../domain/errors.js';
import { ownedAccount, type ApiDeps } from '../deps.js';
import { userOf } from '../plugins/auth.js';
import { limitsJson } from '../plugins/rate-limit.js';
import {
  AccountIdParams,
  AccountSchema,
  RateLimitsSchema,
  CapabilitiesSchema,
  OPEN,
  OrderSchema,
  PositionSchema,
  stdErrors,
  toAccountJson,
  toCapabilitiesJson,
  toOrderJson,
  toPositionJson,
} from '../schemas.js';
import { parseTimeParam } from '../time-params.js';
import type { RouteOpts } from './route-opts.js';
import { openCopies } from './open-copies.js';
import { AccountListCache, pageBody } from './account-list-cache.js';
import { finishPage, NextCursor, pageOf, pageQuery, readPage } from '../paging.js';
import { ACCOUNTS_PAGE, ORDERS_PAGE, orderKey, POSITIONS_PAGE, positionKey } from '../page-specs.js';

export async function accountRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;
  const tags = ['Accounts'];
  const listCache = new AccountListCache();

  r.get(
    `${prefix}/me`,
    {
      onRequest: auth,
      schema: {
        operationId: 'getMe',
        hide,
        tags,
        security,
        ...OPEN,
        summary: "The caller's profile",
        response: {
          200: Type.Object({
            id: Type.String(),
            email: Type.String(),
            createdAt: Type.String(),
            credential: Type.Object({ kind: Type.String(), id: Type.String(), rateLimits: RateLimitsSchema }),
          }),
          ...stdErrors(),
        },
      },
    },
    async (req) => {
      const u = (await deps.store.users.byId(userOf(req)))!;
      const p = req.principal!;
      return {
        id: u.id,
        email: u.email,
        createdAt: u.createdAt.toISOString(),
        credential: { kind: p.credentialKind, id: p.credentialId, rateLimits: limitsJson(deps.v1Limits, p.limits) },
      };
    },
  );

  r.get(
    `${prefix}/accounts`,
    {
      onRequest: auth,
      schema: {
        operationId: 'listAccounts',
        hide,
        tags,
        security,
        summary: "The caller's accounts on every platform, with role, status and health",
        description:
          'Without limit: every account (the spec\'s envelope, unchanged; the accounts quota bounds it). With limit: a page, oldest first, and a Link rel="next" header while more follow (open point).',
        // Other query parameters stay ignored, as before paging: the spec's route takes none and must not start refusing them.
        querystring: Type.Object(pageQuery(ACCOUNTS_PAGE)),
        response: { 200: Type.Object({ accounts: Type.Array(AccountSchema) }), ...stdErrors() },
      },
    },
    async (req, reply) => {
      const page = readPage(req.query, ACCOUNTS_PAGE);
      const user = userOf(req);
      const held = deps.store.accounts.held(user);
      if (!held && page.limit !== Number.MAX_SAFE_INTEGER) {
        // A page of a list this process does not hold (the PostgreSQL store, or the embedded one's first pages):
        // limit + 1 accounts from the table, not the whole list read for one page.
        const rows = await deps.store.accounts.listPage(user, page.after, page.limit + 1);
        const shown = finishPage(req, reply, rows, page, ACCOUNTS_PAGE, (a) => a.id).items;
        return reply.type('application/json; charset=utf-8').send(pageBody(shown) as never);
      }
      const p = listCache.page(user, held ?? (await deps.store.accounts.list(user)), page.after, page.limit);
      const shown = finishPage(req, reply, p.ids, page, ACCOUNTS_PAGE, (id) => id).items;
      // The body is already the response schema's JSON as bytes (AccountListCache): sent as is, not serialized again.
      return reply.type('application/json; charset=utf-8').send(p.body(shown) as never);
    },
  );

  r.get(
    `${prefix}/accounts/:account_id`,
    {
      onRequest: auth,
      schema: {
        operationId: 'getAccount',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'One owned account with its status and health',
        params: AccountIdParams,
        response: { 200: AccountSchema, ...stdErrors() },
      },
    },
    async (req) => toAccountJson(await ownedAccount(deps, req, req.params.account_id, 'read')),
  );

  r.delete(
    `${prefix}/accounts/:account_id`,
    {
      onRequest: auth,
      schema: {
        operationId: 'removeAccount',
        hide,
        tags,
        security,
        ...OPEN,
        summary:
          "Remove an account (a soft delete): its row stays so its trades, its ledger and its Slaves' ledger rows stay readable (GET /v1/trades, GET /v1/trades/{id}, the Slaves' ledgers, with its name); its sealed broker credentials are wiped and its broker identity released (the broker account can be connected again as a new connection); it leaves its group; its copy rule, links, watcher state, shadow twin and risk limits go. Afterwards every account route answers 404 for it and no list shows it. " +
          '409 open_copies while it holds copies (as a Slave) or leads them (as a Master), unless force=true, which leaves those copies open at the brokers, no longer followed; 409 panic_close_running while a panic-close runs on it',
        params: AccountIdParams,
        querystring: Type.Object(
          { force: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])) },
          { additionalProperties: false },
        ),
        response: { 204: Type.Null(), ...stdErrors(403, 409) },
      },
    },
    async (req, reply) => {
      const a = await ownedAccount(deps, req, req.params.account_id, 'manage');
      await deps.panic.assertNoRunningJob(a.userId, a.id, 'removing the account');
      if (req.query.force !== 'true') {
        const open = await deps.store.accounts.openCopies(a.id);
        if (open.asSlave + open.asMaster > 0) {
          const parts = [
            open.asSlave > 0
              ? `holds ${open.asSlave} open ${open.asSlave === 1 ? 'copy' : 'copies'} of its Master's trades`
              : '',
            open.asMaster > 0
              ? `leads ${open.asMaster} open ${open.asMaster === 1 ? 'copy' : 'copies'} on its Slaves`
              : '',
          ].filter(Boolean);
          throw openCopies(
            `the account ${parts.join(' and ')}; close them first (panic-close) or remove with force=true to leave them open at the brokers`,
            open,
          );
        }
      }
      // Drop the live connection first so nothing acts on the account while its row goes; the watcher lets go on its next scan.
      await deps.adapters.evict(a.id);
      await deps.store.accounts.remove(a.id);
      // An adapter built from a read taken just before the row was marked goes too.
      await deps.adapters.evict(a.id);
      reply.code(204);
      return null;
    },
  );

  r.get(
    `${prefix}/accounts/:account_id/capabilities`,
    {
      onRequest: auth,
      schema: {
        operationId: 'getAccountCapabilities',
        hide,
        tags,
        security,
        ...OPEN,
        summary: "The capabilities of the account's adapter; read them before choosing an action",
        params: AccountIdParams,
        response: { 200: CapabilitiesSchema, ...stdErrors() },
      },
    },
    async (req) => {
      const a = await ownedAccount(deps, req, req.params.account_id, 'read');
      return toCapabilitiesJson(
        deps.adapters.capabilities(a.platform) ?? (await deps.adapters.forAccount(a)).capabilities,
      );
    },
  );

  r.get(
    `${prefix}/accounts/:account_id/positions`,
    {
      onRequest: auth,
      schema: {
        operationId: 'listAccountPositions',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'Open positions of any account of the caller, read from its broker; oldest first, paged',
        params: AccountIdParams,
        querystring: Type.Object(pageQuery(POSITIONS_PAGE), { additionalProperties: false }),
        response: {
          200: Type.Object({ positions: Type.Array(PositionSchema), nextCursor: NextCursor }),
          ...stdErrors(409, 502, 503),
        },
      },
    },
    async (req, reply) => {
      const page = readPage(req.query, POSITIONS_PAGE);
      const a = await ownedAccount(deps, req, req.params.account_id, 'read');
      const all = await (await deps.adapters.forAccount(a)).listPositions();
      const rows = pageOf(all, page, positionKey, 'asc');
      const { items, nextCursor } = finishPage(req, reply, rows, page, POSITIONS_PAGE, positionKey);
      return { positions: items.map(toPositionJson), nextCursor };
    },
  );

  r.get(
    `${prefix}/accounts/:account_id/orders`,
    {
      onRequest: auth,
      schema: {
        operationId: 'listAccountOrders',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'Pending orders (and with history=true final ones) of any account of the caller',
        params: AccountIdParams,
        querystring: Type.Object(
          {
            from: Type.Optional(Type.String({ maxLength: 40 })),
            to: Type.Optional(Type.String({ maxLength: 40 })),
            symbol: Type.Optional(Type.String({ maxLength: 32 })),
            history: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
            ...pageQuery(ORDERS_PAGE),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ orders: Type.Array(OrderSchema), nextCursor: NextCursor }),
          ...stdErrors(409, 502, 503),
        },
      },
    },
    async (req, reply) => {
      const page = readPage(req.query, ORDERS_PAGE);
      const a = await ownedAccount(deps, req, req.params.account_id, 'read');
      const from = parseTimeParam(req.query.from, 'from');
      const to = parseTimeParam(req.query.to, 'to');
      if (from && to && from > to) throw invalid('from must not be after to');
      const orders = await (await deps.adapters.forAccount(a)).listOrders({
        includeHistory: req.query.history === 'true',
        ...(from ? { from } : {}),
        ...(to ? { to } : {}),
        ...(req.query.symbol ? { symbol: req.query.symbol } : {}),
      });
      const { items, nextCursor } = finishPage(
        req,
        reply,
        pageOf(orders, page, orderKey, 'desc'),
        page,
        ORDERS_PAGE,
        orderKey,
      );
      return { orders: items.map(toOrderJson), nextCursor };
    },
  );
}
