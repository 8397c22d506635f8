import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ApiDeps } from '../deps.js';
import type { DemoBrokerLogins } from '../../demo/seed.js';
import { requireAuth } from '../plugins/auth.js';
import { OPEN, stdErrors } from '../schemas.js';

const S = Type.String();
const Logins = Type.Object(
  {
    platforma: Type.Array(Type.Object({ platform: S, server: S, login: S, password: S, balance: S })),
    platformb: Type.Array(
      Type.Object({ environment: S, server: S, email: S, password: S, accountNumber: S, balance: S }),
    ),
    platformc: Type.Array(Type.Object({ ctidUser: S, environment: S, accountNumber: S, balance: S })),
  },
  OPEN,
);

/**
 * Demo mode only (registered only when the service runs the simulated brokers): the logins of the simulated
 * accounts kept free to connect, so the three wizards can be tried; a spare any user has connected (or one
 * sharing its broker login) is left out. Not a route of a real deployment.
 */
export async function demoRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const logins = deps.demoBrokerLogins;
  if (!logins) return;
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.get(
    '/app/demo/broker-logins',
    {
      onRequest: requireAuth(deps.auth, 'access_token'),
      schema: {
        operationId: 'getDemoBrokerLogins',
        tags: ['Demo'],
        security: [{ accessToken: [] }],
        ...OPEN,
        summary:
          'Demo mode only: broker logins of the simulated accounts left free for the connection wizards (simulated brokers, no real credentials)',
        response: { 200: Logins, ...stdErrors() },
      },
    },
    async (_req, reply) => {
      reply.header('cache-control', 'no-store');
      const [all, accounts, { unconnectedLogins }] = await Promise.all([
        logins(),
        deps.store.accounts.all(),
        import('../../demo/seed.js'),
      ]);
      // Any user's connection takes a spare off the list: its broker password is no longer handed out.
      const connected = new Set(accounts.map((a) => `${a.platform}:${a.brokerAccountNumber}`));
      return unconnectedLogins(all as DemoBrokerLogins, connected) as never;
    },
  );
}
