import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ApiDeps } from '../deps.js';
import type { DemoBrokerLogins } from '../../demo/seed.js';
import { requireAuth } from '../plugins/auth.js';
import { OPEN, stdErrors } from '../schemas.js';
import { OWN_RECEIVER_PATH } from '../../webhooks/target-guard.js';

const S = Type.String();
const Logins = Type.Object(
  {
    platforma: Type.Array(Type.Object({ platform: S, server: S, login: S, password: S, balance: S })),
    platformb: Type.Array(
      Type.Object({ environment: S, server: S, email: S, password: S, accountNumber: S, balance: S }),
    ),
    platformc: Type.Array(Type.Object({ ctidUser: S, environment: S, accountNumber: S, balance: S })),
    platformd: Type.Array(
      Type.Object({ environment: S, server: S, username: S, domain: S, password: S, account: S, balance: S }),
    ),
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

  await demoWebhookReceiver(app, deps);
}

/**
 * Demo mode's own webhook receiver, the one private target a demo endpoint may use (private targets are
 * refused otherwise: a user's webhook test must not read the host's loopback services). It takes any delivery
 * and answers what it got, which the webhook test and the attempt list show. Registered as a receiver of this
 * service once the listener is bound, at the addresses it is bound to.
 */
async function demoWebhookReceiver(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const own = deps.webhooks.ownReceivers;
  if (!own) return;
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const prefixes: string[] = [];
  app.addHook('onListen', (done) => {
    for (const a of app.addresses()) {
      if (typeof a === 'string') continue; // a unix socket: no URL reaches it
      const v6 = a.family === 'IPv6' || a.family === (6 as never);
      const host = v6
        ? `[${a.address === '::' ? '::1' : a.address}]`
        : a.address === '0.0.0.0'
          ? '127.0.0.1'
          : a.address;
      const prefix = `http://${host}:${a.port}${OWN_RECEIVER_PATH}`;
      own.add(prefix);
      prefixes.push(prefix);
    }
    done();
  });
  app.addHook('onClose', (_app, done) => {
    for (const p of prefixes.splice(0)) own.delete(p);
    done();
  });
  r.post(
    `${OWN_RECEIVER_PATH}:name`,
    {
      schema: {
        operationId: 'demoWebhookReceiver',
        tags: ['Demo'],
        security: [],
        ...OPEN,
        summary:
          "Demo mode only: a webhook receiver of the demo's own, the one loopback target a demo webhook endpoint may use; answers the event it got",
        params: Type.Object({ name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._-]+$' }) }),
        body: Type.Optional(Type.Unknown()),
        response: {
          200: Type.Object({
            received: Type.Boolean(),
            type: Type.Union([Type.String(), Type.Null()]),
            id: Type.Union([Type.String(), Type.Null()]),
          }),
          ...stdErrors(),
        },
      },
    },
    async (req) => {
      const b = (req.body ?? {}) as { type?: unknown; id?: unknown };
      return {
        received: true,
        type: typeof b.type === 'string' ? b.type.slice(0, 100) : null,
        id: typeof b.id === 'string' ? b.id.slice(0, 100) : null,
      };
    },
  );
}
