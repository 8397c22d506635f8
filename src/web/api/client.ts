import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from '../../client/schema';
import { toApiError } from './errors';
import { accessToken, saveSession } from '../lib/session';

/**
 * Typed clients generated from our OpenAPI document (src/client/schema.d.ts, `npm run gen:api`; the CLI's client uses the same file).
 * - `api`: family R (/api/...) and the dashboard's own routes (/app/sign-in, /app/api-keys).
 * - `app`: family V's operations through the dashboard mirror: the document's `/v1/...` paths, sent to
 *   `/app/v1/...` with the signed-in user's access token (the dashboard never holds an API key).
 */
const origin = typeof location === 'undefined' ? 'http://localhost' : location.origin;

/**
 * Our own credential check answers 401 with `WWW-Authenticate: Bearer`; only that ends the session. A 401 about
 * something else (a broker refusing a login in a connection wizard) must not sign the user out.
 */
const sessionEnded = (r: Response) => r.status === 401 && /^bearer/i.test(r.headers.get('www-authenticate') ?? '');

const auth: Middleware = {
  onRequest({ request }) {
    const t = accessToken();
    if (t && !request.headers.has('Authorization')) request.headers.set('Authorization', `Bearer ${t}`);
    request.headers.set('Accept', 'application/json');
    return request;
  },
  onResponse({ request, response }) {
    // A token the server no longer takes ends the session (the sign-in page shows again).
    if (sessionEnded(response) && request.headers.has('Authorization')) saveSession(null);
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: origin });
api.use(auth);
export const app = createClient<paths>({ baseUrl: `${origin}/app` });
app.use(auth);

/** Unwraps an openapi-fetch result: the data, or an ApiError with the server's code, message and Retry-After. */
export async function must<D>(p: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D> {
  const r = await p;
  if (!r.response.ok) throw await toApiError(r.response, r.error);
  return r.data as D;
}

/**
 * A small typed fetch for routes that are not (yet) in the OpenAPI document: the connection wizards' routes,
 * webhook endpoints, panic-close jobs. Same auth and error handling as the typed clients.
 */
export async function http<T>(
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
  init?: { signal?: AbortSignal },
): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const t = accessToken();
  if (t) headers.Authorization = `Bearer ${t}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(`${origin}${path}`, {
    method,
    headers,
    body: body === undefined ? null : JSON.stringify(body),
    signal: init?.signal ?? null,
  });
  if (t && sessionEnded(response)) saveSession(null);
  if (!response.ok) throw await toApiError(response);
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Every item of a paged list, following nextCursor to the last page (such lists are bounded by quotas). */
export async function allPages<T>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>,
): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  do {
    const p = await page(cursor);
    out.push(...p.items);
    cursor = p.nextCursor ?? undefined;
  } while (cursor);
  return out;
}

/** Every open position of an account (the list is paged: issue 46), following nextCursor. */
export const allPositions = (accountId: string) =>
  allPages(async (cursor) => {
    const query = { limit: '500', ...(cursor ? { cursor } : {}) };
    const r = await must(
      app.GET('/v1/accounts/{account_id}/positions', { params: { path: { account_id: accountId }, query } }),
    );
    return { items: r.positions, nextCursor: r.nextCursor };
  });

let routesPromise: Promise<Set<string>> | null = null;

/** The paths the running service documents (family V paths also stand for their /app/v1 mirror). */
export function documentedRoutes(): Promise<Set<string>> {
  routesPromise ??= fetch(`${origin}/openapi.json`, { headers: { Accept: 'application/json' } })
    .then((r) => (r.ok ? (r.json() as Promise<{ paths?: Record<string, unknown> }>) : { paths: {} }))
    .then((d) => new Set(Object.keys(d.paths ?? {})))
    .catch(() => new Set<string>());
  return routesPromise;
}
