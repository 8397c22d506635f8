import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ownedAccount, type ApiDeps } from '../deps.js';
import { AccountIdParams, OPEN, stdErrors } from '../schemas.js';
import type { RouteOpts } from './route-opts.js';
import type { ShadowStatus } from '../../engine/shadow.js';
import { numberOut } from '../decimal-json.js';

const NStr = Type.Union([Type.String(), Type.Null()]);
const NNum = Type.Union([Type.Number(), Type.Null()]);

/** Answers carry amounts as JSON numbers (src/api/decimal-json.ts). */
const shadowJson = (s: ShadowStatus) => ({
  ...s,
  startBalance: numberOut(s.startBalance),
  balance: numberOut(s.balance),
  equity: numberOut(s.equity),
});
const ShadowSchema = Type.Object(
  {
    accountId: Type.String(),
    enabled: Type.Boolean(),
    twinAccountId: NStr,
    twinAccountNumber: NStr,
    startBalance: Type.Union([Type.Number(), Type.Null()], { description: 'the broker balance the twin started from' }),
    balance: NNum,
    equity: NNum,
  },
  {
    ...OPEN,
    description: "A Slave's shadow mode: while enabled its copies go to a simulated twin, never to its broker",
  },
);

export async function shadowRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;
  const tags = ['Shadow mode'];

  r.put(
    `${prefix}/accounts/:account_id/shadow`,
    {
      onRequest: auth,
      schema: {
        operationId: 'setAccountShadow',
        hide,
        tags,
        security,
        ...OPEN,
        summary: "Turn a Slave's shadow mode on or off",
        description:
          'On: a simulated twin with the broker balance is created, and from then on copies (and reads, panic-close, risk sampling) go to the twin; the ledger shows the planned sizing, fills and slippage. Off: copies go to the broker again; the twin is kept for the record.',
        params: AccountIdParams,
        body: Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false }),
        response: { 200: ShadowSchema, ...stdErrors(403) },
      },
    },
    async (req) => {
      const a = await ownedAccount(deps, req, req.params.account_id, 'manage');
      return shadowJson(await (req.body.enabled ? deps.shadow.enable(a) : deps.shadow.disable(a)));
    },
  );

  r.get(
    `${prefix}/accounts/:account_id/shadow`,
    {
      onRequest: auth,
      schema: {
        operationId: 'getAccountShadow',
        hide,
        tags,
        security,
        ...OPEN,
        summary: "A Slave's shadow mode and its twin's balance",
        params: AccountIdParams,
        response: { 200: ShadowSchema, ...stdErrors() },
      },
    },
    async (req) => shadowJson(await deps.shadow.status(await ownedAccount(deps, req, req.params.account_id, 'read'))),
  );
}
