import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { StringDecoder } from 'node:string_decoder';
import { parseRetryAfter } from './retry-schedule.js';
import { guardedLookup, isIpLiteralHost, isPrivateAddress, parseTargetUrl, TargetRefused } from './target-guard.js';

export const SNIPPET_BYTES = 1024;

export interface PostResult {
  status: number | null;
  ok: boolean;
  latencyMs: number;
  /** First bytes of the answer (at most 1 KiB, whole characters only). */
  snippet: string | null;
  error: string | null;
  retryAfterMs: number | null;
  /** The attempt was cut short because the service is stopping: not the receiver's failure. */
  aborted: boolean;
}

export interface PostOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  signal?: AbortSignal;
  now?: () => number;
  /** Name resolution for the connection (tests stand in a rebinding resolver); the guarded one by default. */
  lookup?: typeof guardedLookup;
}

/**
 * One POST of a webhook body. node:http rather than fetch so the connection's own DNS lookup goes through the
 * private-address guard, and so no pooled socket is kept to an arbitrary host. Redirects are not followed:
 * a 3xx is a failed attempt, like any non-2xx.
 */
export function postWebhook(
  rawUrl: string,
  body: string,
  headers: Record<string, string>,
  opts: PostOptions,
): Promise<PostResult> {
  const now = opts.now ?? Date.now;
  const t0 = performance.now();
  const fail = (error: string, aborted = false): PostResult => ({
    status: null,
    ok: false,
    latencyMs: Math.round(performance.now() - t0),
    snippet: null,
    error,
    retryAfterMs: null,
    aborted,
  });
  let url: URL;
  try {
    url = parseTargetUrl(rawUrl);
    const literal = isIpLiteralHost(url);
    if (!opts.allowPrivate && literal && isPrivateAddress(literal))
      throw new TargetRefused(`${literal} is a private address`);
  } catch (err) {
    return Promise.resolve(fail(`refused: ${(err as Error).message}`));
  }
  if (opts.signal?.aborted) return Promise.resolve(fail('aborted: the service is stopping', true));

  return new Promise<PostResult>((resolve) => {
    let settled = false;
    const done = (r: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      resolve(r);
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      url,
      {
        method: 'POST',
        agent: false,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'copytrade-webhooks/1',
        },
        ...(opts.allowPrivate ? {} : { lookup: (opts.lookup ?? guardedLookup) as never }),
      },
      (res: IncomingMessage) => {
        const decoder = new StringDecoder('utf8');
        let taken = 0;
        let snippet = '';
        const finish = () => {
          const status = res.statusCode ?? 0;
          const ok = status >= 200 && status < 300;
          done({
            status,
            ok,
            latencyMs: Math.round(performance.now() - t0),
            snippet,
            error: ok ? null : `HTTP ${status}`,
            retryAfterMs: ok ? null : parseRetryAfter(res.headers['retry-after'], now()),
            aborted: false,
          });
          res.destroy();
        };
        res.on('data', (chunk: Buffer) => {
          if (taken >= SNIPPET_BYTES) return;
          const part = chunk.subarray(0, SNIPPET_BYTES - taken);
          taken += part.length;
          snippet += decoder.write(part);
          // The status decided the attempt; the rest of a large answer is not worth waiting for.
          if (taken >= SNIPPET_BYTES) finish();
        });
        res.on('end', finish);
        res.on('error', finish);
      },
    );
    const onAbort = () => {
      done(fail('aborted: the service is stopping', true));
      req.destroy();
    };
    const timer = setTimeout(() => {
      done(fail(`timeout: no complete answer within ${opts.timeoutMs} ms`));
      req.destroy();
    }, opts.timeoutMs);
    opts.signal?.addEventListener('abort', onAbort);
    // The address actually connected to is checked before a byte is written (first 'connect' listener, ahead
    // of the socket's queued writes): whatever answered a lookup, a private peer never gets the request.
    if (!opts.allowPrivate) {
      req.on('socket', (socket) =>
        socket.prependOnceListener('connect', () => {
          const peer = socket.remoteAddress;
          if (!peer || isPrivateAddress(peer))
            req.destroy(new TargetRefused(`connected to ${peer ?? 'an unknown address'}, a private address`));
        }),
      );
    }
    req.on('error', (err: NodeJS.ErrnoException) =>
      done(fail(err instanceof TargetRefused ? `refused: ${err.message}` : `${err.code ?? 'error'}: ${err.message}`)),
    );
    req.end(body);
  });
}
