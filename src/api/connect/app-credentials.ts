import type { FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.js';

/**
 * Runs before the connection limit: without the application's client id and secret there is nothing to start,
 * and a refusal that is the server's configuration must not use one of the user's connection attempts.
 */
export function requireAppCredentials(c: () => { clientId: string; clientSecret: string }) {
  return async (_req: FastifyRequest) => {
    const missing = [
      ...(c().clientId ? [] : ['COPYTRADE_PLATFORMC_CLIENT_ID']),
      ...(c().clientSecret ? [] : ['COPYTRADE_PLATFORMC_CLIENT_SECRET']),
    ];
    if (missing.length > 0)
      throw new AppError(
        'platform_not_configured',
        `platform C is not set up on this server: its Open API application credentials are missing (the operator sets ${missing.join(' and ')}); no connection attempt was counted`,
        { details: { settings: missing } },
      );
  };
}
