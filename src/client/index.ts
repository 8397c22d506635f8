/**
 * `copytrade/client`: a typed client of family V (`/v1`, API key), generated from the service's OpenAPI
 * document. The types come from schema.d.ts (`npm run gen:api`), the one generated file the dashboard's
 * client (src/web/api) uses too; the calls go through openapi-fetch, so a path, a parameter or a body that the
 * document does not have is a compile error. The `copytrade` CLI's trading commands are built on it.
 *
 *   const ct = createCopytradeClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: process.env.COPYTRADE_API_KEY! });
 *   const { accounts } = await ct.call(ct.api.GET('/v1/accounts'));
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };
export { PLATFORM_NAMES, platformName } from './platform-names.js';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
/** The JSON body of an operation's success answer (200, 201 or 202). */
export type Ok<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: infer R }
  ? R extends { 200: infer X }
    ? Json<X>
    : R extends { 201: infer X }
      ? Json<X>
      : R extends { 202: infer X }
        ? Json<X>
        : never
  : never;
/** The JSON body an operation takes. */
export type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: infer B }
  ? Json<NonNullable<B>>
  : never;

export type Account = Ok<'/v1/accounts', 'get'>['accounts'][number];
export type Position = Ok<'/v1/accounts/{account_id}/positions', 'get'>['positions'][number];
export type Group = Ok<'/v1/copier-groups', 'get'>['groups'][number];
export type Trade = Ok<'/v1/trades/{trade_id}', 'get'>;
export type LedgerRow = Trade['copies'][number];
export type OrderRequest = Body<'/v1/accounts/{account_id}/orders', 'post'>;
export type CopyRulePatch = Body<'/v1/accounts/{account_id}/copy-rule', 'put'>;
export type PanicJob = Ok<'/v1/panic-close-jobs/{job_id}', 'get'>;

/** An error answer of the service: its body `{code, error, requestId}` plus the status and the other details. */
export class CopytradeApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'CopytradeApiError';
  }
}

async function toError(response: Response, body: unknown): Promise<CopytradeApiError> {
  let b = body;
  if (b === undefined)
    b = await response
      .clone()
      .json()
      .catch(() => null);
  const { code, error, requestId, ...rest } = (b && typeof b === 'object' ? b : {}) as Record<string, unknown>;
  return new CopytradeApiError(
    response.status,
    typeof code === 'string' ? code : `http_${response.status}`,
    typeof error === 'string' ? error : `${response.status} ${response.statusText || 'error'}`,
    typeof requestId === 'string' ? requestId : response.headers.get('x-request-id'),
    rest,
  );
}

export interface CopytradeClientOptions {
  /** Where family V is served (`v1BaseUrl` of the startup summary), without `/v1`. */
  baseUrl: string;
  /** An API key (`ctk_...`). */
  apiKey: string;
  fetch?: typeof fetch;
}

export interface CopytradeClient {
  /** The generated openapi-fetch client: `api.GET('/v1/accounts/{account_id}', { params: { path: { account_id } } })`. */
  api: Client<paths>;
  /** The data of a call, or a CopytradeApiError with the service's code. */
  call<D>(p: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D>;
  /** Like `call`, with the HTTP status (202 vs 200 matters for panic-close). */
  callWithStatus<D>(
    p: Promise<{ data?: D; error?: unknown; response: Response }>,
  ): Promise<{ data: D; status: number }>;
  /** Polls a panic-close job until it is no longer running, reporting each state read. */
  followPanicJob(
    jobId: string,
    onProgress?: (job: PanicJob) => void,
    o?: { intervalMs?: number; signal?: AbortSignal },
  ): Promise<PanicJob>;
  /** The live event stream (server-sent events), from `cursor` on (from now without one), until `signal` aborts. */
  events(o?: { cursor?: string; signal?: AbortSignal }): AsyncGenerator<StreamedEvent>;
}

export interface StreamedEvent {
  /** Opaque, the caller's own: pass it back as `cursor` to resume after this event. */
  cursor: string;
  type: string;
  event: {
    id: string;
    type: string;
    timestamp: string;
    accountId: string | null;
    sequence: number;
    data: unknown;
    [k: string]: unknown;
  };
}

export function createCopytradeClient(o: CopytradeClientOptions): CopytradeClient {
  const baseUrl = o.baseUrl.replace(/\/+$/, '');
  const doFetch = o.fetch ?? globalThis.fetch;
  const api = createClient<paths>({ baseUrl, fetch: doFetch });
  const auth: Middleware = {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${o.apiKey}`);
      request.headers.set('Accept', 'application/json');
      return request;
    },
  };
  api.use(auth);

  const callWithStatus = async <D>(p: Promise<{ data?: D; error?: unknown; response: Response }>) => {
    const r = await p;
    if (!r.response.ok) throw await toError(r.response, r.error);
    return { data: r.data as D, status: r.response.status };
  };
  const call = async <D>(p: Promise<{ data?: D; error?: unknown; response: Response }>) =>
    (await callWithStatus(p)).data;

  async function followPanicJob(
    jobId: string,
    onProgress?: (job: PanicJob) => void,
    f: { intervalMs?: number; signal?: AbortSignal } = {},
  ): Promise<PanicJob> {
    for (;;) {
      const job = await call(
        api.GET('/v1/panic-close-jobs/{job_id}', {
          params: { path: { job_id: jobId } },
          ...(f.signal ? { signal: f.signal } : {}),
        }),
      );
      onProgress?.(job);
      if (job.state !== 'running') return job;
      await new Promise((r) => setTimeout(r, f.intervalMs ?? 250));
    }
  }

  async function* events(e: { cursor?: string; signal?: AbortSignal } = {}): AsyncGenerator<StreamedEvent> {
    const url = `${baseUrl}/v1/events/stream${e.cursor !== undefined ? `?cursor=${encodeURIComponent(e.cursor)}` : ''}`;
    const res = await doFetch(url, {
      headers: { Authorization: `Bearer ${o.apiKey}`, Accept: 'text/event-stream' },
      ...(e.signal ? { signal: e.signal } : {}),
    });
    if (!res.ok || !res.body) throw await toError(res, undefined);
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        // One message per blank line; comments (": keep-alive") and the retry hint carry no event.
        let cut: number;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const f: Record<string, string> = {};
          for (const line of block.split('\n')) {
            const m = /^([a-z]+): ?(.*)$/.exec(line);
            if (m) f[m[1]!] = f[m[1]!] === undefined ? m[2]! : `${f[m[1]!]}\n${m[2]!}`;
          }
          if (f.data !== undefined && f.id !== undefined)
            yield {
              cursor: f.id,
              type: f.event ?? 'message',
              event: JSON.parse(f.data) as StreamedEvent['event'],
            };
        }
      }
    } catch (err) {
      if (e.signal?.aborted) return;
      throw err;
    }
  }

  return { api, call, callWithStatus, followPanicJob, events };
}
