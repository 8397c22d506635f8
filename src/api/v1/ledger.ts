import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError, notFound } from '../../domain/errors.js';
import type { ReconcileResult } from '../../engine/drift.js';
import { toNum } from '../../domain/decimal.js';
import type { CopyIntent, Trade } from '../../domain/ledger-types.js';
import { ownedAccount, type ApiDeps } from '../deps.js';
import { userOf } from '../plugins/auth.js';
import { OPEN, stdErrors } from '../schemas.js';
import { parseTimeParam } from '../time-params.js';
import type { RouteOpts } from './route-opts.js';
import { finishPage, NextCursor, pageQuery, readPage } from '../paging.js';
import { LEDGER_PAGE, REQUESTS_PAGE, TRADES_PAGE } from '../page-specs.js';

const NNum = Type.Union([Type.Number(), Type.Null()]);
const NStr = Type.Union([Type.String(), Type.Null()]);

const LedgerRow = Type.Object(
  {
    intentId: Type.String(),
    accountId: Type.String(),
    accountName: Type.String({ description: "the Slave's name, also once the account was removed" }),
    action: Type.String(),
    symbol: Type.String(),
    side: Type.String(),
    plannedVolume: NNum,
    plannedPrice: NNum,
    stopLoss: NNum,
    takeProfit: NNum,
    outcome: Type.String({ description: 'planned, sent, confirmed, rejected, denied, unresolved or skipped' }),
    skipReason: NStr,
    brokerAnswer: Type.Any(),
    brokerOrderId: NStr,
    brokerPositionId: NStr,
    filledVolume: NNum,
    fillPrice: NNum,
    slippage: NNum,
    latencyMs: Type.Any(),
    tag: Type.String(),
    createdAt: Type.String(),
    updatedAt: Type.String(),
  },
  OPEN,
);
const TradeSchema = Type.Object(
  {
    tradeId: Type.String(),
    masterAccountId: Type.String(),
    masterAccountName: Type.String({ description: "the Master's name, also once the account was removed" }),
    source: Type.String(),
    action: Type.String(),
    symbol: Type.String(),
    side: Type.String(),
    type: Type.String(),
    volume: Type.Number(),
    price: NNum,
    stopLoss: NNum,
    takeProfit: NNum,
    status: Type.String({
      description: 'pending, accepted, rejected or unresolved (values beyond accepted: open point)',
    }),
    master: Type.Object({ outcome: Type.Any(), positionId: NStr, orderId: NStr, fillPrice: NNum, tag: Type.String() }),
    copiedTo: Type.Integer(),
    requestId: NStr,
    createdAt: Type.String(),
    copies: Type.Array(LedgerRow),
  },
  OPEN,
);

/** Account names by id, removed accounts included (a removed account's history keeps its name). */
type Names = Map<string, string>;

const ledgerJson = (names: Names) => (i: CopyIntent) => ({
  intentId: i.id,
  accountId: i.slaveAccountId,
  accountName: names.get(i.slaveAccountId) ?? i.slaveAccountId,
  action: i.action,
  symbol: i.symbol,
  side: i.side,
  plannedVolume: toNum(i.plannedVolume),
  plannedPrice: toNum(i.plannedPrice),
  stopLoss: toNum(i.stopLoss),
  takeProfit: toNum(i.takeProfit),
  outcome: i.state,
  skipReason: i.skipReason,
  brokerAnswer: i.outcome ?? null,
  brokerOrderId: i.brokerOrderId,
  brokerPositionId: i.brokerPositionId,
  filledVolume: toNum(i.filledVolume),
  fillPrice: toNum(i.fillPrice),
  slippage: toNum(i.slippage),
  latencyMs: i.latency ?? null,
  tag: i.tag,
  createdAt: i.createdAt.toISOString(),
  updatedAt: i.updatedAt.toISOString(),
});
const tradeJson = (t: Trade, copies: CopyIntent[], names: Names) => ({
  tradeId: t.id,
  masterAccountId: t.masterAccountId,
  masterAccountName: names.get(t.masterAccountId) ?? t.masterAccountId,
  source: t.source,
  action: t.action,
  symbol: t.symbol,
  side: t.side,
  type: t.orderType,
  volume: t.volume.toNumber(),
  price: toNum(t.price),
  stopLoss: toNum(t.stopLoss),
  takeProfit: toNum(t.takeProfit),
  status: t.status,
  master: {
    outcome: t.masterOutcome ?? null,
    positionId: t.masterPositionId,
    orderId: t.masterOrderId,
    fillPrice: toNum(t.fillPrice),
    tag: t.tag,
  },
  copiedTo: t.copiedTo,
  requestId: t.requestId,
  createdAt: t.createdAt.toISOString(),
  copies: copies.map(ledgerJson(names)),
});

const Paging = Type.Object(
  {
    before: Type.Optional(
      Type.String({ maxLength: 40, description: 'ISO 8601 or epoch ms: only entries created before it' }),
    ),
    ...pageQuery(TRADES_PAGE),
    accountId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);
const position = (r: { position: string }) => r.position;

const DriftSchema = Type.Object(
  {
    kind: Type.String({
      description: 'orphan, missing_copy, volume_mismatch, user_closed, unlinked_copy or duplicate_copy',
    }),
    masterAccountId: Type.String(),
    slaveAccountId: Type.String(),
    masterPositionId: NStr,
    slavePositionId: NStr,
    detail: Type.String(),
    action: Type.String({
      description:
        'what a real run does: close_orphan, open_missing, reduce_volume, accept_volume, mark_user_closed, adopt_copy, close_duplicate or none',
    }),
  },
  OPEN,
);
const ReconcileSchema = Type.Object(
  {
    masterAccountId: Type.String(),
    dryRun: Type.Boolean(),
    drift: Type.Array(DriftSchema),
    healed: Type.Array(Type.Intersect([DriftSchema, Type.Object({ tradeId: NStr })])),
    unreachable: Type.Array(Type.String()),
  },
  OPEN,
);
const reconcileJson = (r: ReconcileResult) => r;

/** The copy ledger and the request records: what the service did, per trade, per account and per request. */
export async function ledgerRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;
  const tags = ['Ledger'];
  const namesOf = (ts: Trade[], is: CopyIntent[]) =>
    deps.store.accounts.namesOf([...ts.map((t) => t.masterAccountId), ...is.map((i) => i.slaveAccountId)]);

  r.get(
    `${prefix}/trades/:trade_id`,
    {
      onRequest: auth,
      schema: {
        operationId: 'getTrade',
        hide,
        tags,
        security,
        ...OPEN,
        summary: "A trade: the Master's outcome and one ledger row per Slave",
        params: Type.Object({ trade_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: TradeSchema, ...stdErrors() },
      },
    },
    async (req) => {
      const t = await deps.store.trades.ownedTrade(userOf(req), req.params.trade_id);
      if (!t) throw notFound('trade');
      const copies = await deps.store.trades.intentsOfTrade(t.id);
      return tradeJson(t, copies, await namesOf([t], copies));
    },
  );

  r.get(
    `${prefix}/trades`,
    {
      onRequest: auth,
      schema: {
        operationId: 'listTrades',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'Recent trades, newest first (accountId filters by Master)',
        querystring: Paging,
        response: { 200: Type.Object({ trades: Type.Array(TradeSchema), nextCursor: NextCursor }), ...stdErrors() },
      },
    },
    async (req, reply) => {
      const before = parseTimeParam(req.query.before, 'before');
      const page = readPage(req.query, TRADES_PAGE);
      const rows = await deps.store.trades.listTrades(userOf(req), {
        limit: page.limit + 1,
        after: page.after,
        ...(before ? { before } : {}),
        ...(req.query.accountId ? { accountId: req.query.accountId } : {}),
      });
      const { items, nextCursor } = finishPage(req, reply, rows, page, TRADES_PAGE, position);
      const intents = await deps.store.trades.intentsOfTrades(items.map((t) => t.id));
      const names = await namesOf(items, intents);
      return {
        trades: items.map((t) =>
          tradeJson(
            t,
            intents.filter((i) => i.tradeId === t.id),
            names,
          ),
        ),
        nextCursor,
      };
    },
  );

  r.get(
    `${prefix}/accounts/:account_id/ledger`,
    {
      onRequest: auth,
      schema: {
        operationId: 'listAccountLedger',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'Ledger rows of one Slave account, newest first',
        params: Type.Object({ account_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        querystring: Type.Omit(Paging, ['accountId']),
        response: { 200: Type.Object({ entries: Type.Array(LedgerRow), nextCursor: NextCursor }), ...stdErrors() },
      },
    },
    async (req, reply) => {
      const a = await ownedAccount(deps, req, req.params.account_id, 'read');
      const before = parseTimeParam(req.query.before, 'before');
      const page = readPage(req.query, LEDGER_PAGE);
      const rows = await deps.store.trades.intentsOfAccount(a.id, {
        limit: page.limit + 1,
        after: page.after,
        ...(before ? { before } : {}),
      });
      const { items, nextCursor } = finishPage(req, reply, rows, page, LEDGER_PAGE, position);
      return { entries: items.map(ledgerJson(new Map([[a.id, a.name]]))), nextCursor };
    },
  );

  /** A Slave reconciles against its group's Master; a Master reconciles its whole group. */
  const reconcile = async (req: FastifyRequest, accountId: string, dryRun: boolean) => {
    if (!deps.reconciler) throw new AppError('upstream_unavailable', 'the reconciler is not running in this process');
    // A dry run reads; a real run heals (opens and closes copies at the brokers), as a trade does.
    const a = await ownedAccount(deps, req, accountId, dryRun ? 'read' : 'trade');
    const userId = a.userId;
    const master =
      a.role === 'master'
        ? a
        : a.groupId
          ? (await deps.store.accounts.list(userId, { groupId: a.groupId })).find((m) => m.role === 'master')
          : undefined;
    if (!master)
      throw new AppError('conflict', `account ${a.id} is not in a copier group with a Master: nothing to reconcile`);
    return reconcileJson(
      await deps.reconciler.run(master, { dryRun, ...(a.role === 'slave' ? { onlySlave: a.id } : {}) }),
    );
  };

  r.get(
    `${prefix}/accounts/:account_id/reconcile`,
    {
      onRequest: auth,
      schema: {
        operationId: 'reconcileDryRun',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'What the reconciler would do now (dry run: nothing is changed)',
        description:
          "Compares the Master's positions, our links and the Slaves' positions: orphans, missing copies, volume mismatches, copies closed by hand. Each drift item says what a real run would do.",
        params: Type.Object({ account_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: ReconcileSchema, ...stdErrors(409, 503) },
      },
    },
    async (req) => reconcile(req, req.params.account_id, true),
  );

  r.post(
    `${prefix}/accounts/:account_id/reconcile`,
    {
      onRequest: auth,
      schema: {
        operationId: 'runReconcile',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'Reconcile now and heal per policy (dryRun=true only reports)',
        params: Type.Object({ account_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        querystring: Type.Object(
          { dryRun: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])) },
          { additionalProperties: false },
        ),
        response: { 200: ReconcileSchema, ...stdErrors(403, 409, 503) },
      },
    },
    async (req) => reconcile(req, req.params.account_id, req.query.dryRun === 'true'),
  );

  r.get(
    `${prefix}/requests`,
    {
      onRequest: auth,
      schema: {
        operationId: 'listRequestRecords',
        hide,
        tags,
        security,
        ...OPEN,
        summary: "The caller's recorded requests, newest first",
        querystring: Type.Omit(Paging, ['accountId']),
        response: {
          200: Type.Object({
            requests: Type.Array(
              Type.Object({
                requestId: Type.String(),
                method: Type.String(),
                route: Type.String(),
                path: Type.String(),
                status: Type.Integer(),
                credentialKind: NStr,
                bodyDigest: NStr,
                response: Type.Any(),
                durationMs: NNum,
                idempotencyKey: NStr,
                createdAt: Type.String(),
              }),
            ),
            nextCursor: NextCursor,
          }),
          ...stdErrors(),
        },
      },
    },
    async (req, reply) => {
      const before = parseTimeParam(req.query.before, 'before');
      const page = readPage(req.query, REQUESTS_PAGE);
      const rows = await deps.store.requests.list(userOf(req), {
        limit: page.limit + 1,
        after: page.after,
        ...(before ? { before } : {}),
      });
      const { items, nextCursor } = finishPage(req, reply, rows, page, REQUESTS_PAGE, position);
      return {
        nextCursor,
        requests: items.map((x) => ({
          requestId: x.id,
          method: x.method,
          route: x.route,
          path: x.path,
          status: x.status,
          credentialKind: x.credentialKind,
          bodyDigest: x.bodyDigest,
          response: x.response ?? null,
          durationMs: x.durationMs === null ? null : Number(x.durationMs),
          idempotencyKey: x.idempotencyKey,
          createdAt: x.createdAt.toISOString(),
        })),
      };
    },
  );
}
