import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ApiDeps } from '../deps.js';
import { requireAuth, userOf } from '../plugins/auth.js';
import { OPEN, stdErrors } from '../schemas.js';

const S = Type.String();
const Inbox = Type.Object(
  {
    demoOnly: Type.Literal(true),
    messages: Type.Array(Type.Object({ channelId: S, kind: S, to: S, subject: S, text: S, at: S })),
  },
  OPEN,
);

/**
 * Demo mode only, when the operator set no SMTP server or Bot API URL: the alert messages the caller's channels
 * "sent", kept in this process's memory (alerts/demo-inbox.ts). Not a route of a real deployment.
 */
export async function demoAlertInboxRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const inbox = deps.alertInbox;
  if (!inbox) return;
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/app/demo/alert-inbox',
    {
      onRequest: requireAuth(deps.auth, 'access_token'),
      schema: {
        operationId: 'getDemoAlertInbox',
        tags: ['Demo'],
        security: [{ accessToken: [] }],
        ...OPEN,
        summary:
          'Demo mode only: the alert messages your channels sent, kept in memory instead of leaving the machine (last 50)',
        response: { 200: Inbox, ...stdErrors() },
      },
    },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      const messages = inbox.messages(userOf(req)).map(({ userId: _u, ...m }) => m);
      return { demoOnly: true as const, messages };
    },
  );
}
