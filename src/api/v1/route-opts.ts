import type { onRequestAsyncHookHandler } from 'fastify';

/**
 * How a family V route module is mounted: its prefix, the auth hook (API key on /v1; the dashboard reaches
 * the same routes through the /app/v1 rewrite with its access token, see api/app/mirror.ts), the OpenAPI
 * security, and whether the routes are hidden from this server's document (when
 * family V is served on its own port, the R port keeps only the dashboard's mirror).
 */
export interface RouteOpts {
  prefix: string;
  auth: onRequestAsyncHookHandler;
  security: Array<Record<string, string[]>>;
  hide: boolean;
}
