/**
 * Builds the OpenAPI document of both families without listening on a port (no store, no broker: the route
 * handlers never run). Used by `npm run gen:api` and by the lint test (test/hygiene/openapi-lint.test.ts), so
 * both see the very document that GET /openapi.json serves.
 */
import { buildServer } from '../src/api/server.js';
import type { ApiDeps } from '../src/api/deps.js';

/**
 * Route modules may build helpers from their deps while registering (a repository over the store, say), but
 * none runs a handler: a stub where every property is another stub (and calling one gives one) is enough.
 */
function stub(): unknown {
  const fn = () => undefined;
  return new Proxy(fn, {
    get: (_t, prop) => (prop === 'then' ? undefined : prop === Symbol.toPrimitive ? () => 0 : stub()),
    apply: () => stub(),
    construct: () => stub() as object,
  });
}

export async function buildOpenApiDocument(opts: { baseUrl?: string } = {}): Promise<Record<string, unknown>> {
  const stubDeps = new Proxy({ connectLimit: { max: 3, windowMs: 5 * 60_000 } } as Record<string | symbol, unknown>, {
    get: (t, prop) => (prop in t ? t[prop] : stub()),
  }) as unknown as ApiDeps;
  // The operator routes too (/readyz is documented; /metrics is hidden): every process serves them.
  const ops = { metrics: stub(), readiness: stub() } as never;
  const app = await buildServer(stubDeps, { families: ['r', 'v1'], logger: false, ops, ...opts });
  await app.ready();
  const doc = app.swagger() as unknown as Record<string, unknown>;
  await app.close();
  // A copy: the swagger plugin caches its object, and callers may mutate theirs.
  return JSON.parse(JSON.stringify(doc)) as Record<string, unknown>;
}
