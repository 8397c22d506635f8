import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ownedAccount, type ApiDeps } from '../deps.js';
import { AccountIdParams, OPEN, stdErrors, toAccountJson } from '../schemas.js';
import {
  applyConnectionTest,
  readConnectionTest,
  TestedAccountSchema,
  toTestJson,
} from '../connect/connection-test.js';
import type { RouteOpts } from './route-opts.js';

/**
 * The connection test of an account, read or run again: what the connect route answered, and how an account whose
 * test failed (status unverified) becomes assignable once the broker allows the reads.
 */
export async function connectionTestRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;
  const tags = ['Accounts'];
  const path = `${prefix}/accounts/:account_id/connection-test`;

  r.get(
    path,
    {
      onRequest: auth,
      schema: {
        operationId: 'getConnectionTest',
        hide,
        tags,
        security,
        ...OPEN,
        summary:
          'The account with its last connection test (connectionTest null: connected before tests were kept, or not tested yet)',
        params: AccountIdParams,
        response: { 200: TestedAccountSchema, ...stdErrors() },
      },
    },
    async (req) => {
      const account = await ownedAccount(deps, req, req.params.account_id, 'read');
      const t = await deps.store.connectionTests.last(account.id);
      return { ...toAccountJson(account), connectionTest: t ? toTestJson(t) : null };
    },
  );

  r.post(
    path,
    {
      onRequest: auth,
      schema: {
        operationId: 'runConnectionTest',
        hide,
        tags,
        security,
        ...OPEN,
        summary:
          "Read the account at its broker again (funds, positions, orders, trading allowed): a pass makes an unverified account connected and assignable, a refused read makes it unverified with the broker's words",
        params: AccountIdParams,
        response: { 200: TestedAccountSchema, ...stdErrors(403) },
      },
    },
    async (req) => {
      const account = await ownedAccount(deps, req, req.params.account_id, 'manage');
      const t = await readConnectionTest(deps, account);
      await applyConnectionTest(deps, account, t);
      return { ...toAccountJson((await deps.store.accounts.byId(account.id))!), connectionTest: toTestJson(t) };
    },
  );
}
