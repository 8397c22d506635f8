import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Decimal } from '../../domain/decimal.js';
import { ownedAccount, type ApiDeps } from '../deps.js';
import { AccountIdParams, ErrorBody, OPEN, stdErrors } from '../schemas.js';
import type { RouteOpts } from './route-opts.js';
import { DECIMAL_LIMIT, DecimalIn, decimalIn } from '../decimal-json.js';

/** The upper bound is ours (the spec shows none): finite and below DECIMAL_LIMIT, as every number we take. */
const Price = Type.Union([Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: DECIMAL_LIMIT, ...OPEN }), Type.Null()]);

/** The spec's order request; `type` and `price` are our additions for pending orders (open point). */
export const OrderRequest = Type.Object(
  {
    symbol: Type.String({ minLength: 1, maxLength: 32, pattern: '^[A-Za-z0-9._/#-]+$' }),
    side: Type.Union([Type.Literal('buy'), Type.Literal('sell')], {
      ...OPEN,
      description: 'buy or sell (values beyond buy: open point)',
    }),
    volume: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1_000_000,
      description: 'decimal quantity in lots of the Master broker; a multiple of its volume step',
    }),
    stopLoss: Type.Optional(Price),
    takeProfit: Type.Optional(Price),
    type: Type.Optional(
      Type.Union([Type.Literal('market'), Type.Literal('limit'), Type.Literal('stop')], { ...OPEN, default: 'market' }),
    ),
    // Not the spec's: family V's convention for our own fields (number or decimal string).
    price: Type.Optional(
      Type.Union([DecimalIn({ positive: true, description: 'limit or stop price of a pending order' }), Type.Null()]),
    ),
  },
  { additionalProperties: false },
);

/** Our choice (open point "Admission control on the order route"): the spec has 429 for rate limits only. */
const Refused = Type.Object(
  {
    ...ErrorBody.properties,
    retryAfter: Type.Optional(Type.Integer({ description: 'the Retry-After header, in seconds' })),
    slaves: Type.Optional(
      Type.Array(
        Type.Object(
          {
            accountId: Type.String(),
            name: Type.String(),
            queuedWrites: Type.Integer({ description: 'writes handed to the connection and not answered yet' }),
            unsettledWrites: Type.Integer({
              description: 'fresh copies whose outcome is unknown (each owes a lookup and maybe a resend)',
            }),
            writesPerSec: Type.Number({ description: "the rate the Slave's connection drains at (pacer or measured)" }),
            estimatedWaitMs: Type.Integer({ description: 'twice (safety factor) the backlog over that rate' }),
            budgetMs: Type.Integer({ description: "what is left of the rule's maxDelayMs" }),
            retryAfterSec: Type.Integer(),
          },
          { additionalProperties: true },
        ),
        { description: 'slaves_backlogged only: the Slaves whose backlog refused the order' },
      ),
    ),
  },
  {
    additionalProperties: true,
    ...OPEN,
    description:
      "over the rate limit (code rate_limited), or (code slaves_backlogged, our choice, x-open-point) a copy of this order would go stale in an eligible Slave's backlog: the body names the Slaves and the estimated wait; nothing reached any broker; wait Retry-After seconds",
  },
);

export const OrderResponse = Type.Object({
  tradeId: Type.String(),
  status: Type.Literal('accepted'),
  copiedTo: Type.Integer({ description: 'number of Slave accounts the order was dispatched to' }),
  masterPositionId: Type.Union([Type.String(), Type.Null()], OPEN),
  fillPrice: Type.Union([Type.Number(), Type.Null()], OPEN),
});

// Decimal from the JSON number's shortest text form, so 0.1 stays exactly 0.1.
const d = (n: number | string) => new Decimal(decimalIn(n));
const dn = (n: number | string | null | undefined) => (n === null || n === undefined ? null : d(n));

export async function orderRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.post(
    `${o.prefix}/accounts/:account_id/orders`,
    {
      onRequest: o.auth,
      schema: {
        operationId: 'sendOrder',
        hide: o.hide,
        tags: ['Orders'],
        security: o.security,
        ...OPEN,
        summary: 'Send an order to a Master account; copy rules distribute it to its eligible Slaves',
        description:
          "The Master broker confirms first; then one copy intent per eligible Slave is recorded and dispatched. \"accepted\" is not \"filled\": read the trade (getTrade) for each copy's outcome. 409 write_outcome_unknown when the Master broker did not answer in time; 409 panic_close_running (with jobId) while a panic-close job covers the account. 429 slaves_backlogged (our choice, open point) before the Master's write when a copy would outlive an eligible Slave's maxDelayMs in its connection's backlog; orders placed by hand at the Master's broker are never refused (they are copied, or recorded stale with a reason).",
        params: AccountIdParams,
        body: OrderRequest,
        response: { 202: OrderResponse, ...stdErrors(403, 409, 502, 503), 429: Refused },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const account = await ownedAccount(deps, req, req.params.account_id, 'trade');
      await deps.panic.assertNoRunningJob(account.userId, account.id, 'an order');
      const res = await deps.orders.send(
        account.userId,
        account.id,
        {
          symbol: b.symbol,
          side: b.side,
          volume: d(b.volume),
          type: b.type ?? 'market',
          price: dn(b.price),
          stopLoss: dn(b.stopLoss),
          takeProfit: dn(b.takeProfit),
        },
        req.id,
      );
      res.copies.catch((err: unknown) => req.log.error({ err, tradeId: res.tradeId }, 'copy dispatch failed'));
      reply.code(202);
      return {
        tradeId: res.tradeId,
        status: res.status,
        copiedTo: res.copiedTo,
        masterPositionId: res.masterPositionId,
        fillPrice: res.fillPrice?.toNumber() ?? null,
      };
    },
  );
}
