import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { invalid } from '../../domain/errors.js';
import { ownedAccount, type ApiDeps } from '../deps.js';
import { AccountIdParams, OPEN, stdErrors } from '../schemas.js';
import { parseTimeParam } from '../time-params.js';
import type { RouteOpts } from './route-opts.js';

/** The ranges the dashboard offers; `from`/`to` take any other window. */
export const EQUITY_RANGES = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000 } as const;
const MAX_POINTS = 1000;
const DEFAULT_POINTS = 300;
/** The monitor writes at most one snapshot a minute: finer buckets would only be empty. */
const MIN_BUCKET_MS = 60_000;

const Point = Type.Object(
  { t: Type.String({ description: 'time of the snapshot (ISO 8601)' }), balance: Type.Number(), equity: Type.Number() },
  OPEN,
);

export async function equityRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;

  r.get(
    `${prefix}/accounts/:account_id/equity-history`,
    {
      onRequest: auth,
      schema: {
        operationId: 'getEquityHistory',
        hide,
        tags: ['Accounts'],
        security,
        ...OPEN,
        summary:
          "Balance and equity over time from the health monitor's reads (at most one snapshot a minute, kept 30 days), " +
          'downsampled to at most `points` points (the last snapshot of each bucket). Window: `range` (1h, 24h, 7d; default 24h) ending now, or `from`/`to`.',
        params: AccountIdParams,
        querystring: Type.Object(
          {
            range: Type.Optional(Type.Union(Object.keys(EQUITY_RANGES).map((k) => Type.Literal(k)))),
            from: Type.Optional(Type.String({ maxLength: 40 })),
            to: Type.Optional(Type.String({ maxLength: 40 })),
            points: Type.Optional(
              Type.String({ pattern: '^[0-9]{1,4}$', description: `2..${MAX_POINTS}, default ${DEFAULT_POINTS}` }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object(
            {
              accountId: Type.String(),
              from: Type.String(),
              to: Type.String(),
              bucketSeconds: Type.Integer(),
              points: Type.Array(Point),
            },
            OPEN,
          ),
          ...stdErrors(),
        },
      },
    },
    async (req) => {
      const a = await ownedAccount(deps, req, req.params.account_id, 'read');
      const q = req.query;
      if (q.range && (q.from || q.to)) throw invalid('give either range or from/to, not both');
      const to = parseTimeParam(q.to, 'to') ?? new Date();
      const from =
        parseTimeParam(q.from, 'from') ??
        new Date(to.getTime() - EQUITY_RANGES[(q.range ?? '24h') as keyof typeof EQUITY_RANGES]);
      if (from > to) throw invalid('from must not be after to');
      const wanted = q.points === undefined ? DEFAULT_POINTS : Number(q.points);
      if (wanted < 2 || wanted > MAX_POINTS) throw invalid(`points must be 2 to ${MAX_POINTS}`);
      const bucketMs = Math.max(MIN_BUCKET_MS, Math.ceil((to.getTime() - from.getTime()) / wanted / 1000) * 1000);
      const points = await deps.store.equity.series(a.id, from, to, bucketMs);
      return {
        accountId: a.id,
        from: from.toISOString(),
        to: to.toISOString(),
        bucketSeconds: bucketMs / 1000,
        points: points.map((p) => ({ t: p.at.toISOString(), balance: Number(p.balance), equity: Number(p.equity) })),
      };
    },
  );
}
