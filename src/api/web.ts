import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';
import { packageRoot } from '../config/package-root.js';

/** Paths the dashboard never answers: the API families, the dashboard's own API, the documents, health. */
const RESERVED = /^\/(?:api|v1|app|docs|metrics)(?:[/?]|$)|^\/(?:openapi\.json|healthz|readyz)(?:[?]|$)/;

/** Content-Security-Policy of the dashboard's page: everything from this origin; inline styles for React's style props. */
const CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'";

export const dashboardDir = (): string => join(packageRoot(), 'dist', 'web');

function pageHeaders(reply: FastifyReply): void {
  reply.header('cache-control', 'no-cache');
  reply.header('content-security-policy', CSP);
  reply.header('x-frame-options', 'DENY');
  reply.header('referrer-policy', 'same-origin');
}

/**
 * The web dashboard (src/web, built by `npm run build` into dist/web), served at the root of the base URL:
 * its files, and index.html for any other GET that asks for HTML (the dashboard routes in the browser) —
 * except under /api, /v1, /app, /docs, /openapi.json, /healthz and /readyz, which keep their own 404.
 * When the dashboard has not been built, `/` says how to build it.
 */
export async function webDashboard(app: FastifyInstance, dir = dashboardDir()): Promise<void> {
  await app.register(async (scope) => {
    const built = existsSync(join(dir, 'index.html'));
    if (built) {
      await scope.register(fastifyStatic, {
        root: dir,
        prefix: '/',
        wildcard: false,
        index: ['index.html'],
        schemaHide: true,
        setHeaders: (res, path) => {
          res.header('x-content-type-options', 'nosniff');
          if (/[/\\]assets[/\\]/.test(path)) res.header('cache-control', 'public, max-age=31536000, immutable');
          else if (path.endsWith('.html')) {
            res.header('cache-control', 'no-cache');
            res.header('content-security-policy', CSP);
            res.header('x-frame-options', 'DENY');
          }
        },
      });
    }
    scope.route({
      method: ['GET', 'HEAD'],
      url: '/*',
      schema: { hide: true },
      handler: async (req, reply) => {
        const path = req.url;
        const file = /\.[A-Za-z0-9]+$/.test(path.split('?')[0]!); // a missing file stays a 404, never the page
        if (RESERVED.test(path) || file || !(req.headers.accept ?? '').includes('text/html'))
          return reply.callNotFound();
        pageHeaders(reply);
        if (built) return reply.sendFile('index.html');
        return reply
          .type('text/html; charset=utf-8')
          .send(
            '<!doctype html><title>copytrade</title><p>The dashboard is not built: run <code>npm run build</code>. The API is up: <a href="/docs">/docs</a>.</p>',
          );
      },
    });
  });
}
