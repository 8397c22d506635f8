import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { invalid } from '../../domain/errors.js';
import type { Platform } from '../../domain/types.js';
import { ownedAccount, type ApiDeps } from '../deps.js';
import { requireAuth, userOf } from '../plugins/auth.js';
import {
  AccountSchema,
  CapabilitiesSchema,
  IdParams,
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
import { finishPage, NextCursor, pageOf, pageQuery, readPage } from '../paging.js';
import { ACCOUNTS_PAGE, ORDERS_PAGE, orderKey, POSITIONS_PAGE, positionKey } from '../page-specs.js';

const envelope = <T extends Parameters<typeof Type.Array>[0]>(item: T) =>
  Type.Object({ success: Type.Literal(true), data: Type.Array(item) });

const OrdersQuery = Type.Object(
  {
    from: Type.Optional(
      Type.String({ maxLength: 40, description: 'ISO 8601 date-time or Unix epoch milliseconds (format: open point)' }),
    ),
    to: Type.Optional(
      Type.String({ maxLength: 40, description: 'ISO 8601 date-time or Unix epoch milliseconds (format: open point)' }),
    ),
    instrumentId: Type.Optional(
      Type.String({ maxLength: 64, description: "the broker's instrument id or the symbol (format: open point)" }),
    ),
    ...pageQuery(ORDERS_PAGE),
  },
  { additionalProperties: false },
);

/**
 * Family R (/api): signed-in user bearer token; platform B accounts under /api/trading-accounts and
 * platform C accounts under /api/platformc. Bodies other than the first route's are open points: we use the
 * same {success, data} envelope for all of them.
 */
export async function tradingAccountRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const auth = requireAuth(deps.auth, 'access_token');
  const security = [{ accessToken: [] }];
  const tags = ['Family R'];

  const list = async (
    req: FastifyRequest,
    reply: FastifyReply,
    q: { limit?: string; cursor?: string },
    platform: Platform,
  ) => {
    const page = readPage(q, ACCOUNTS_PAGE);
    const rows = pageOf(await deps.store.accounts.list(userOf(req), { platform }), page, (a) => a.id, 'asc');
    return finishPage(req, reply, rows, page, ACCOUNTS_PAGE, (a) => a.id).items.map(toAccountJson);
  };
  // Other query parameters stay ignored, as before paging: the spec's routes take none and must not start refusing them.
  const AccountsQuery = Type.Object(pageQuery(ACCOUNTS_PAGE));
  const pagedNote =
    'Without limit: every account (envelope unchanged). With limit: a page, oldest first, and a Link rel="next" header while more follow (open point).';
  // Positions' envelope is ours (spec: "not shown"), so the next page's cursor is in the body as for orders.
  const positions = async (req: FastifyRequest, reply: FastifyReply, id: string, platform: Platform) => {
    const page = readPage(req.query as { limit?: string; cursor?: string }, POSITIONS_PAGE);
    const account = await ownedAccount(deps, req, id, 'read', platform);
    const all = await (await deps.adapters.forAccount(account)).listPositions();
    const rows = pageOf(all, page, positionKey, 'asc');
    const { items, nextCursor } = finishPage(req, reply, rows, page, POSITIONS_PAGE, positionKey);
    return { success: true as const, data: items.map(toPositionJson), nextCursor };
  };
  // Like the account lists: the spec's routes take no query, so other parameters stay ignored.
  const PositionsQuery = Type.Object(pageQuery(POSITIONS_PAGE));
  const positionsBody = Type.Object({
    success: Type.Literal(true),
    data: Type.Array(PositionSchema),
    nextCursor: NextCursor,
  });

  r.get(
    '/api/trading-accounts',
    {
      onRequest: auth,
      schema: {
        operationId: 'listTradingAccounts',
        tags,
        security,
        summary: "The signed-in user's platform B accounts",
        description: pagedNote,
        querystring: AccountsQuery,
        response: { 200: envelope(AccountSchema), ...stdErrors() },
      },
    },
    async (req, reply) => ({ success: true as const, data: await list(req, reply, req.query, 'platformb') }),
  );

  r.get(
    '/api/trading-accounts/:id/capabilities',
    {
      onRequest: auth,
      schema: {
        operationId: 'getTradingAccountCapabilities',
        tags,
        security,
        ...OPEN,
        summary: "Capabilities of the account's adapter",
        params: IdParams,
        response: { 200: Type.Object({ success: Type.Literal(true), data: CapabilitiesSchema }), ...stdErrors() },
      },
    },
    async (req) => {
      const account = await ownedAccount(deps, req, req.params.id, 'read', 'platformb');
      const caps =
        deps.adapters.capabilities(account.platform) ?? (await deps.adapters.forAccount(account)).capabilities;
      return { success: true as const, data: toCapabilitiesJson(caps) };
    },
  );

  r.get(
    '/api/trading-accounts/:id/positions',
    {
      onRequest: auth,
      schema: {
        operationId: 'listTradingAccountPositions',
        tags,
        security,
        ...OPEN,
        summary: 'Positions of an owned platform B account; oldest first, paged',
        params: IdParams,
        querystring: PositionsQuery,
        response: { 200: positionsBody, ...stdErrors(409, 502, 503) },
      },
    },
    async (req, reply) => positions(req, reply, req.params.id, 'platformb'),
  );

  r.get(
    '/api/trading-accounts/:id/orders',
    {
      onRequest: auth,
      schema: {
        operationId: 'listTradingAccountOrders',
        tags,
        security,
        ...OPEN,
        summary: 'Orders of an owned platform B account',
        params: IdParams,
        querystring: OrdersQuery,
        response: {
          200: Type.Object({ success: Type.Literal(true), data: Type.Array(OrderSchema), nextCursor: NextCursor }),
          ...stdErrors(409, 502, 503),
        },
      },
    },
    async (req, reply) => {
      const page = readPage(req.query, ORDERS_PAGE);
      const account = await ownedAccount(deps, req, req.params.id, 'read', 'platformb');
      const from = parseTimeParam(req.query.from, 'from');
      const to = parseTimeParam(req.query.to, 'to');
      if (from && to && from > to) throw invalid('from must not be after to');
      const adapter = await deps.adapters.forAccount(account);
      let symbol: string | undefined;
      // The broker's instrument id first (what platform B calls tradableInstrumentId), else the symbol as typed.
      if (req.query.instrumentId)
        symbol = (await adapter.symbolOfInstrumentId?.(req.query.instrumentId)) ?? req.query.instrumentId;
      const orders = await adapter.listOrders({
        includeHistory: true,
        ...(from ? { from } : {}),
        ...(to ? { to } : {}),
        ...(symbol ? { symbol } : {}),
      });
      const matching = orders.filter((o) => !symbol || o.symbol === symbol);
      const { items, nextCursor } = finishPage(
        req,
        reply,
        pageOf(matching, page, orderKey, 'desc'),
        page,
        ORDERS_PAGE,
        orderKey,
      );
      return { success: true as const, data: items.map(toOrderJson), nextCursor };
    },
  );

  r.get(
    '/api/platformc/accounts',
    {
      onRequest: auth,
      schema: {
        operationId: 'listPlatformCAccounts',
        tags,
        security,
        ...OPEN,
        summary: "The signed-in user's connected platform C accounts",
        description: pagedNote,
        querystring: AccountsQuery,
        response: { 200: envelope(AccountSchema), ...stdErrors() },
      },
    },
    async (req, reply) => ({ success: true as const, data: await list(req, reply, req.query, 'platformc') }),
  );

  r.get(
    '/api/platformc/accounts/:id/positions',
    {
      onRequest: auth,
      schema: {
        operationId: 'listPlatformCAccountPositions',
        tags,
        security,
        ...OPEN,
        summary: 'Positions of an owned platform C account; oldest first, paged',
        params: IdParams,
        querystring: PositionsQuery,
        response: { 200: positionsBody, ...stdErrors(409, 502, 503) },
      },
    },
    async (req, reply) => positions(req, reply, req.params.id, 'platformc'),
  );
}
