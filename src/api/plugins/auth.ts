import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { AuthService, Principal } from '../../auth/auth-service.js';
import { sendError } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export type AuthKind = 'access_token' | 'api_key';

function bearer(req: FastifyRequest): string | null {
  const h = req.headers.authorization;
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1]! : null;
}

/**
 * onRequest hook (so it runs before the body is even parsed) that requires a bearer credential of one kind. Missing, malformed, unknown, expired, revoked
 * or of the other kind: the same 401, so a caller learns nothing about which part was wrong.
 */
export function requireAuth(auth: AuthService, kind: AuthKind): onRequestAsyncHookHandler {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const secret = bearer(req);
    const principal = secret
      ? await (kind === 'api_key' ? auth.authenticateApiKey(secret) : auth.authenticateToken(secret))
      : null;
    if (!principal) {
      reply.header('www-authenticate', 'Bearer');
      const what = kind === 'api_key' ? 'an API key' : 'a signed-in user access token';
      await sendError(
        req,
        reply,
        401,
        'unauthorized',
        `missing or invalid credentials: send Authorization: Bearer <${kind === 'api_key' ? 'API_KEY' : 'ACCESS_TOKEN'}> with ${what}`,
      );
      return reply;
    }
    req.principal = principal;
  };
}

/** The authenticated caller's user id (routes run only after requireAuth). */
export const userOf = (req: FastifyRequest): string => req.principal!.userId;

/**
 * Who makes a change, as rule revisions record it: the owner of what changes (`ownerId`: a user with a role on
 * someone else's account acts on the owner's data) and the credential (`key:<id>` or `session:<id>`), which names
 * the caller.
 */
export const whoOf = (req: FastifyRequest, ownerId: string): { userId: string; actor: string } => {
  const p = req.principal!;
  return { userId: ownerId, actor: `${p.credentialKind === 'api_key' ? 'key' : 'session'}:${p.credentialId}` };
};
