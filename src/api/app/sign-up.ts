import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ApiDeps } from '../deps.js';
import { OPEN, stdErrors } from '../schemas.js';

/** Self-service sign-up and email verification (docs/people.md); off unless COPYTRADE_SIGN_UP=on. */
export async function signUpRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const common = { tags: ['Sign-up'], security: [], ...OPEN };
  const signUp = deps.signUp;

  r.get(
    '/app/sign-up',
    {
      schema: {
        ...common,
        operationId: 'getSignUp',
        summary: 'Whether this server takes sign-ups (the dashboard shows its sign-up form when it does)',
        response: { 200: Type.Object({ enabled: Type.Boolean() }), ...stdErrors() },
      },
    },
    async () => ({ enabled: !!signUp?.enabled }),
  );

  r.post(
    '/app/sign-up',
    {
      schema: {
        ...common,
        operationId: 'signUp',
        summary: 'Create an account; a verification link goes to the email address, and sign-in waits for it',
        description:
          'The same 202 whether or not the address already has an account. Counted like a failed sign-in of the address and the email (429 with Retry-After after a few). 404 when sign-up is off.',
        body: Type.Object(
          {
            email: Type.String({ minLength: 3, maxLength: 254 }),
            password: Type.String({ minLength: 8, maxLength: 1024 }),
          },
          { additionalProperties: false },
        ),
        response: {
          202: Type.Object({ status: Type.Literal('verification_sent') }),
          ...stdErrors(503),
        },
      },
    },
    async (req, reply) => {
      if (!signUp) throw new Error('sign-up is not composed');
      await signUp.signUp(req.body.email, req.body.password, req.ip);
      reply.code(202);
      return { status: 'verification_sent' as const };
    },
  );

  r.post(
    '/app/verify-email',
    {
      schema: {
        ...common,
        operationId: 'verifyEmail',
        summary: "Follow a sign-up's verification link: the account may sign in from now on (the link works once)",
        body: Type.Object({ token: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
        response: { 200: Type.Object({ verified: Type.Literal(true), email: Type.String() }), ...stdErrors() },
      },
    },
    async (req) => {
      if (!signUp) throw new Error('sign-up is not composed');
      const v = await signUp.verify(req.body.token);
      return { verified: true as const, email: v.email };
    },
  );
}
