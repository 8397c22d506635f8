import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Decimal } from '../../domain/decimal.js';
import { AppError, invalid } from '../../domain/errors.js';
import type { OrderOutcome } from '../../platforms/adapter.js';
import { ownedAccount, type ApiDeps } from '../deps.js';
import { OPEN, stdErrors } from '../schemas.js';
import type { RouteOpts } from './route-opts.js';
import { DecimalIn, decimalIn } from '../decimal-json.js';

const Outcome = Type.Object(
  {
    outcome: Type.String({ description: 'confirmed (a broker rejection is a 400, an unknown outcome a 409)' }),
    brokerOrderId: Type.Union([Type.String(), Type.Null()]),
    positionId: Type.Union([Type.String(), Type.Null()]),
    filledVolume: Type.Union([Type.Number(), Type.Null()]),
    fillPrice: Type.Union([Type.Number(), Type.Null()]),
  },
  OPEN,
);
const Price = Type.Union([DecimalIn({ positive: true }), Type.Null()]);
const PositionParams = Type.Object({
  account_id: Type.String({ minLength: 1, maxLength: 64 }),
  position_id: Type.String({ minLength: 1, maxLength: 64 }),
});
const d = (n: number | string | null | undefined) => (n === null || n === undefined ? null : new Decimal(decimalIn(n)));

/** A broker answer as HTTP: confirmed is the body; rejected/denied a 400 with the reason; unknown a 409. */
function answer(o: OrderOutcome) {
  if (o.kind === 'confirmed') {
    return {
      outcome: 'confirmed',
      brokerOrderId: o.brokerOrderId,
      positionId: o.positionId,
      filledVolume: o.filledVolume?.toNumber() ?? null,
      fillPrice: o.fillPrice?.toNumber() ?? null,
    };
  }
  if (o.kind === 'unresolved')
    throw new AppError(
      'write_outcome_unknown',
      `the broker did not confirm in time (${o.message}); read the account's positions before retrying`,
    );
  throw invalid(`the broker refused: ${o.message}`, { brokerCode: o.code });
}

/**
 * Act on one position or pending order of any account of the caller. On a Master the watcher sees the change
 * at the broker and copies it to the Slaves like a change made by hand; on a Slave it is a manual change
 * the reconciler will not undo.
 */
export async function positionRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;
  const tags = ['Orders'];

  r.post(
    `${prefix}/accounts/:account_id/positions/:position_id/close`,
    {
      onRequest: auth,
      schema: {
        operationId: 'closePosition',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'Close a position, fully or partly (volume in lots)',
        params: PositionParams,
        body: Type.Optional(
          Type.Object(
            {
              volume: Type.Optional(
                DecimalIn({ positive: true, max: 1_000_000, description: 'lots to close; all when left out' }),
              ),
            },
            { additionalProperties: false },
          ),
        ),
        response: { 200: Outcome, ...stdErrors(403, 409, 502, 503) },
      },
    },
    async (req) => {
      const account = await ownedAccount(deps, req, req.params.account_id, 'trade');
      const adapter = await deps.adapters.forAccount(account);
      const position = (await adapter.listPositions()).find((p) => p.id === req.params.position_id);
      if (!position) throw new AppError('not_found', 'position not found');
      const volume = d(req.body?.volume);
      if (volume && volume.gt(position.volume))
        throw invalid(`volume ${volume} is more than the position's ${position.volume}`);
      return answer(
        await adapter.closePosition(position.id, volume && !volume.eq(position.volume) ? volume : undefined),
      );
    },
  );

  r.patch(
    `${prefix}/accounts/:account_id/positions/:position_id`,
    {
      onRequest: auth,
      schema: {
        operationId: 'modifyPosition',
        hide,
        tags,
        security,
        ...OPEN,
        summary:
          "Set a position's stop loss and take profit (null removes one; both are sent so neither is wiped by accident)",
        params: PositionParams,
        body: Type.Object({ stopLoss: Price, takeProfit: Price }, { additionalProperties: false }),
        response: { 200: Outcome, ...stdErrors(403, 409, 502, 503) },
      },
    },
    async (req) => {
      const account = await ownedAccount(deps, req, req.params.account_id, 'trade');
      const adapter = await deps.adapters.forAccount(account);
      if (!(await adapter.listPositions()).some((p) => p.id === req.params.position_id))
        throw new AppError('not_found', 'position not found');
      return answer(
        await adapter.modifyPosition(req.params.position_id, {
          stopLoss: d(req.body.stopLoss),
          takeProfit: d(req.body.takeProfit),
        }),
      );
    },
  );

  r.delete(
    `${prefix}/accounts/:account_id/orders/:order_id`,
    {
      onRequest: auth,
      schema: {
        operationId: 'cancelOrder',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'Cancel a pending order',
        params: Type.Object({
          account_id: Type.String({ minLength: 1, maxLength: 64 }),
          order_id: Type.String({ minLength: 1, maxLength: 64 }),
        }),
        response: { 200: Outcome, ...stdErrors(403, 409, 502, 503) },
      },
    },
    async (req) => {
      const account = await ownedAccount(deps, req, req.params.account_id, 'trade');
      const adapter = await deps.adapters.forAccount(account);
      if (!(await adapter.listOrders()).some((x) => x.id === req.params.order_id && x.status === 'pending'))
        throw new AppError('not_found', 'pending order not found');
      return answer(await adapter.cancelOrder(req.params.order_id));
    },
  );
}
