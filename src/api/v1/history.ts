import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { invalid } from '../../domain/errors.js';
import { tradesCsv } from '../../domain/history/csv.js';
import { groupStats } from '../../engine/history/group-stats.js';
import { HistoryService } from '../../engine/history/history-service.js';
import { type ApiDeps, ownedAccount, reqGroup } from '../deps.js';
import { HISTORY_PAGE } from '../page-specs.js';
import { finishPage, NextCursor, pageOf, pageQuery, readPage } from '../paging.js';
import { AccountIdParams, OPEN, stdErrors } from '../schemas.js';
import { parseTimeParam } from '../time-params.js';
import {
  AccountStatsSchema,
  accountStatsJson,
  ClosedTradeSchema,
  GroupStatsSchema,
  groupStatsJson,
  tradeJson,
} from './history-json.js';
import type { RouteOpts } from './route-opts.js';

/** Our bounds of a history period (docs/open-points.md, "History and reports"). */
export const HISTORY_MAX_DAYS = 366;
export const HISTORY_DEFAULT_DAYS = 30;
const DAY_MS = 86_400_000;

const Period = {
  from: Type.Optional(
    Type.String({ maxLength: 40, description: `ISO 8601 or epoch ms; default: to - ${HISTORY_DEFAULT_DAYS} days` }),
  ),
  to: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 or epoch ms, exclusive; default: now' })),
};

/** [from, to) of the query: both optional, from before to, at most HISTORY_MAX_DAYS long. */
export function readPeriod(q: { from?: string | undefined; to?: string | undefined }, now = Date.now()) {
  const to = parseTimeParam(q.to, 'to') ?? new Date(now);
  const from = parseTimeParam(q.from, 'from') ?? new Date(to.getTime() - HISTORY_DEFAULT_DAYS * DAY_MS);
  if (from >= to) throw invalid('from must be before to');
  if (to.getTime() - from.getTime() > HISTORY_MAX_DAYS * DAY_MS)
    throw invalid(`the period is longer than ${HISTORY_MAX_DAYS} days: ask for it in parts`);
  return { from, to };
}

/** Closed trades and statistics, read from each account's broker history (engine/history). */
export async function historyRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;
  const tags = ['History'];
  const history = new HistoryService({ store: deps.store, adapters: deps.adapters });

  r.get(
    `${prefix}/accounts/:account_id/history`,
    {
      onRequest: auth,
      schema: {
        operationId: 'listAccountHistory',
        hide,
        tags,
        security,
        ...OPEN,
        summary:
          "Trades closed in [from, to) on any account of the caller, from the broker's deal history, newest close first. " +
          "A Slave's trades carry the Master trade they copied, its profit scaled by the volume ratio. " +
          '`format=csv` answers the whole period as text/csv (limit and cursor do not apply).',
        params: AccountIdParams,
        querystring: Type.Object(
          {
            ...Period,
            format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')], OPEN)),
            ...pageQuery(HISTORY_PAGE),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object(
            {
              accountId: Type.String(),
              currency: Type.Union([Type.String(), Type.Null()]),
              from: Type.String(),
              to: Type.String(),
              trades: Type.Array(ClosedTradeSchema),
              nextCursor: NextCursor,
            },
            OPEN,
          ),
          ...stdErrors(502, 503),
        },
      },
    },
    async (req, reply) => {
      const csv = req.query.format === 'csv';
      const page = csv ? null : readPage(req.query, HISTORY_PAGE);
      const a = await ownedAccount(deps, req, req.params.account_id, 'read');
      const { from, to } = readPeriod(req.query);
      const trades = await history.trades(a, from, to);
      if (csv) {
        const name = `history-${a.id}-${from.toISOString().slice(0, 10)}-${to.toISOString().slice(0, 10)}.csv`;
        // A string is sent as it is (the JSON schema of 200 does not apply to it).
        return (reply as FastifyReply)
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${name}"`)
          .send(tradesCsv([...trades].reverse()));
      }
      const key = (t: (typeof trades)[number]) => `${t.closeTime}|${t.id}`;
      const { items, nextCursor } = finishPage(
        req,
        reply,
        pageOf(trades, page!, key, 'desc'),
        page!,
        HISTORY_PAGE,
        key,
      );
      return {
        accountId: a.id,
        currency: a.currency,
        from: from.toISOString(),
        to: to.toISOString(),
        trades: items.map(tradeJson),
        nextCursor,
      };
    },
  );

  r.get(
    `${prefix}/accounts/:account_id/history/stats`,
    {
      onRequest: auth,
      schema: {
        operationId: 'getAccountHistoryStats',
        hide,
        tags,
        security,
        ...OPEN,
        summary:
          'Statistics of the trades closed in [from, to): net profit, gross profit/loss, win rate, profit factor, max ' +
          "drawdown of the cumulative realized curve, per symbol; a Slave's copy success ratio, mean slippage and its " +
          "profit beside the Master's scaled profit",
        params: AccountIdParams,
        querystring: Type.Object(Period, { additionalProperties: false }),
        response: { 200: AccountStatsSchema, ...stdErrors(502, 503) },
      },
    },
    async (req) => {
      const a = await ownedAccount(deps, req, req.params.account_id, 'read');
      const { from, to } = readPeriod(req.query);
      const s = await history.stats(a, from, to);
      return { from: from.toISOString(), to: to.toISOString(), ...accountStatsJson(s) };
    },
  );

  r.get(
    `${prefix}/copier-groups/:group_id/history/stats`,
    {
      onRequest: auth,
      schema: {
        operationId: 'getGroupHistoryStats',
        hide,
        tags,
        security,
        ...OPEN,
        summary:
          "Statistics of a copier group's members over [from, to): the Master, each follower beside it, and the " +
          "followers' total. A member whose broker cannot be read carries an error instead; the rest is answered.",
        params: Type.Object({ group_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        querystring: Type.Object(Period, { additionalProperties: false }),
        response: { 200: GroupStatsSchema, ...stdErrors() },
      },
    },
    async (req) => {
      const { from, to } = readPeriod(req.query);
      const { ownerId } = await reqGroup(deps, req, req.params.group_id, 'read');
      const g = await groupStats(history, deps.store.accounts, ownerId, req.params.group_id, from, to);
      return { from: from.toISOString(), to: to.toISOString(), ...groupStatsJson(g) };
    },
  );
}
