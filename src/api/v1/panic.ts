import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ApiDeps } from '../deps.js';
import { userOf } from '../plugins/auth.js';
import { AccountIdParams, OPEN, stdErrors } from '../schemas.js';
import type { RouteOpts } from './route-opts.js';

const ClosedPosition = Type.Object({
  positionId: Type.String(), symbol: Type.String(), side: Type.String(), volume: Type.String(),
  outcome: Type.String({ description: 'closed, failed or unresolved' }), closePrice: Type.Union([Type.String(), Type.Null()]), error: Type.Union([Type.String(), Type.Null()]),
});
export const AccountPanicReport = Type.Object({
  accountId: Type.String(),
  closed: Type.Integer(),
  failed: Type.Integer(),
  remaining: Type.Integer({ description: 'open positions left; 0 means the account is flat' }),
  error: Type.Union([Type.String(), Type.Null()]),
  positions: Type.Array(ClosedPosition),
}, OPEN);

export async function panicRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Panic close'];
  r.post(`${o.prefix}/accounts/:account_id/panic-close`, {
    onRequest: o.auth,
    schema: {
      operationId: o.op('panicCloseAccount'), hide: o.hide, tags, security: o.security,
      summary: 'Close all open trades of the account (risk rule, drawdown limit or manual emergency)',
      params: AccountIdParams, response: { 200: AccountPanicReport, ...stdErrors() },
    },
  }, async (req) => deps.panic.closeAccount(userOf(req), req.params.account_id));

  r.post(`${o.prefix}/copier-groups/:group_id/panic-close`, {
    onRequest: o.auth,
    schema: {
      operationId: o.op('panicCloseGroup'), hide: o.hide, tags, security: o.security, ...OPEN,
      summary: 'Close all open trades of every account in the copier group',
      params: Type.Object({ group_id: Type.String({ maxLength: 64 }) }),
      response: { 200: Type.Object({ groupId: Type.String(), accounts: Type.Array(AccountPanicReport) }, OPEN), ...stdErrors() },
    },
  }, async (req) => deps.panic.closeGroup(userOf(req), req.params.group_id));
}
