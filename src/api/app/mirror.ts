import type { IncomingMessage } from 'node:http';

const MIRROR = Symbol('copytrade.appMirror');
const PREFIX = '/app/v1/';

/** Fastify rewriteUrl: /app/v1/... becomes /v1/..., and the raw request remembers it came from the dashboard. */
export function rewriteAppMirror(req: IncomingMessage): string {
  const url = req.url ?? '/';
  if (!url.startsWith(PREFIX)) return url;
  (req as IncomingMessage & { [MIRROR]?: true })[MIRROR] = true;
  return `/v1/${url.slice(PREFIX.length)}`;
}

export const isAppMirror = (req: IncomingMessage): boolean =>
  (req as IncomingMessage & { [MIRROR]?: true })[MIRROR] === true;
