import type { onRequestAsyncHookHandler } from 'fastify';

/**
 * The same route modules serve family V (/v1, API key) and the dashboard's mirror (/app/v1, access token):
 * one handler, two credentials. The mirror is hidden from the OpenAPI document so every operationId stays unique.
 */
export interface RouteOpts {
  prefix: string;
  auth: onRequestAsyncHookHandler;
  security: Array<Record<string, string[]>>;
  op: (id: string) => string;
  hide: boolean;
}
