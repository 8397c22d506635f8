import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { SecondFactorService } from '../../auth/second-factor.js';
import type { ApiDeps } from '../deps.js';
import { requireAuth, userOf } from '../plugins/auth.js';
import { OPEN, stdErrors } from '../schemas.js';

const Code = Type.String({
  minLength: 6,
  maxLength: 32,
  description: 'the 6 digits the authenticator app shows now, or an unused recovery code',
});
const Status = Type.Object({
  enabled: Type.Boolean(),
  pending: Type.Boolean({ description: 'enrolled, waiting for the first code' }),
  recoveryCodesLeft: Type.Integer(),
});

/**
 * The TOTP second factor (docs/people.md) on the dashboard's routes: a signed-in user's access token only (an API
 * key cannot turn it off), and the second step of a sign-in.
 */
export async function secondFactorRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const auth = requireAuth(deps.auth, 'access_token');
  const common = { tags: ['Second factor'], security: [{ accessToken: [] }], ...OPEN };
  // The one the sign-in checks codes with (its clock included); the CLI's store-only AuthService has none.
  const factor = deps.auth.secondFactor ?? new SecondFactorService(deps.store, deps.box);

  r.post(
    '/app/sign-in/second-factor',
    {
      schema: {
        ...common,
        security: [],
        operationId: 'signInSecondFactor',
        summary: "Answer a sign-in's challenge with a code: the access token",
        description:
          'A wrong code counts like a wrong password (the same growing waits per account and address, 429 with Retry-After). A recovery code works once.',
        body: Type.Object(
          { challenge: Type.String({ minLength: 1, maxLength: 128 }), code: Code },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            accessToken: Type.String({ description: 'shown once; store it safely' }),
            tokenType: Type.Literal('Bearer'),
            expiresAt: Type.String(),
            userId: Type.String(),
          }),
          ...stdErrors(),
        },
      },
    },
    async (req) => {
      const t = await deps.auth.completeSignIn(req.body.challenge, req.body.code, req.ip);
      return {
        accessToken: t.accessToken,
        tokenType: 'Bearer' as const,
        expiresAt: t.expiresAt.toISOString(),
        userId: t.userId,
      };
    },
  );

  r.get(
    '/app/second-factor',
    {
      onRequest: auth,
      schema: {
        ...common,
        operationId: 'getSecondFactor',
        summary: 'Whether the second factor is on',
        response: { 200: Status, ...stdErrors() },
      },
    },
    async (req) => factor.status(userOf(req)),
  );

  r.post(
    '/app/second-factor/enrol',
    {
      onRequest: auth,
      schema: {
        ...common,
        operationId: 'enrolSecondFactor',
        summary: 'Start enrolment: a TOTP secret and its otpauth URI for the authenticator app (shown once)',
        description: 'The factor is not on until a first code confirms it. 409 while it is on.',
        response: {
          200: Type.Object({ secret: Type.String({ description: 'base32' }), otpauthUri: Type.String() }),
          ...stdErrors(409),
        },
      },
    },
    async (req) => factor.enrol(userOf(req)),
  );

  r.post(
    '/app/second-factor/confirm',
    {
      onRequest: auth,
      schema: {
        ...common,
        operationId: 'confirmSecondFactor',
        summary: 'Turn the factor on with the first code; the answer holds ten recovery codes, shown this once',
        body: Type.Object({ code: Code }, { additionalProperties: false }),
        response: { 200: Type.Object({ recoveryCodes: Type.Array(Type.String()) }), ...stdErrors(409) },
      },
    },
    async (req) => factor.confirm(userOf(req), req.body.code),
  );

  r.post(
    '/app/second-factor/disable',
    {
      onRequest: auth,
      schema: {
        ...common,
        operationId: 'disableSecondFactor',
        summary: 'Turn the factor off with a code (or a recovery code); the secret and recovery codes are deleted',
        body: Type.Object({ code: Code }, { additionalProperties: false }),
        response: { 204: Type.Null(), ...stdErrors(409) },
      },
    },
    async (req, reply) => {
      await factor.disable(userOf(req), req.body.code);
      reply.code(204);
      return null;
    },
  );
}
