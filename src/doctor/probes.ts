import { lookup } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/** What a probe found: answered (with the HTTP status and Date header when it was HTTP), or why not. */
export type ProbeResult =
  | { ok: true; ms: number; status?: number; date?: string; firstLine?: string }
  | { ok: false; ms: number; reason: string; tls: boolean };

export interface ProbeOptions {
  timeoutMs: number;
  /** PEM to trust instead of the system CAs (the simulator's self-signed certificate). */
  ca?: string;
}

const TLS_CODE = /CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/i;

/** The words an operator needs: DNS failure, refused, timeout, TLS does not validate. */
function describeNetError(err: unknown, host: string): { reason: string; tls: boolean } {
  const e = err as { code?: string; message?: string } | null;
  const code = e?.code ?? '';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA')
    return { reason: `unreachable: DNS failure (${code} ${host})`, tls: false };
  if (code === 'ECONNREFUSED') return { reason: 'unreachable: connection refused', tls: false };
  if (code === 'ETIMEDOUT' || code === 'ABORT_ERR' || code === 'TIMEOUT')
    return { reason: `unreachable: ${e?.message ?? 'timeout'}`, tls: false };
  if (code === 'ENETUNREACH' || code === 'EHOSTUNREACH')
    return { reason: `unreachable: no route to the host (${code})`, tls: false };
  if (code === 'ECONNRESET') return { reason: 'unreachable: the connection was reset', tls: false };
  if (TLS_CODE.test(code)) return { reason: `TLS does not validate: ${code} (${e?.message ?? ''})`, tls: true };
  return { reason: `unreachable: ${code || e?.message || String(err)}`, tls: false };
}

const timeoutError = (what: string, ms: number) =>
  Object.assign(new Error(`timeout: ${what} took over ${ms} ms`), { code: 'TIMEOUT' });

/**
 * Runs `work` with a deadline that holds whatever `work` does: the promise settles by then, and `cleanup`
 * (destroying the socket) runs. dns.lookup cannot be cancelled, so it is raced rather than aborted.
 */
function bounded<T>(
  what: string,
  ms: number,
  work: (settle: (err: Error | null, v?: T) => void) => () => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    let cleanup: () => void = () => undefined;
    const settle = (err: Error | null, v?: T) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      cleanup();
      if (err) reject(err);
      else resolve(v as T);
    };
    const timer = setTimeout(() => settle(timeoutError(what, ms)), ms);
    cleanup = work(settle);
  });
}

/** Resolves the host name (an address or localhost passes as is): a failure is the DNS's, said so. */
async function resolveHost(host: string, ms: number): Promise<void> {
  if (isIP(host) !== 0 || host === 'localhost') return;
  await bounded<void>(`resolving ${host}`, ms, (settle) => {
    lookup(host).then(
      () => settle(null),
      (err: Error) => settle(err),
    );
    return () => undefined;
  });
}

const hostOf = (u: URL) => u.hostname.replace(/^\[|\]$/g, '');

/** One GET to the URL: any HTTP answer counts as reached; https certificates are validated. */
export async function probeHttp(url: string, o: ProbeOptions): Promise<ProbeResult> {
  const started = performance.now();
  const u = new URL(url);
  const host = hostOf(u);
  const ms = () => Math.round(performance.now() - started);
  try {
    await resolveHost(host, o.timeoutMs);
    const left = Math.max(1, o.timeoutMs - ms());
    const res = await bounded<{ status: number; date?: string }>(`GET ${u.origin}`, left, (settle) => {
      const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(u, { method: 'GET', headers: { accept: 'application/json' }, ...(o.ca ? { ca: o.ca } : {}) });
      req.on('response', (r) => {
        r.resume();
        settle(null, { status: r.statusCode ?? 0, ...(r.headers.date ? { date: r.headers.date } : {}) });
      });
      req.on('error', (err) => settle(err));
      req.end();
      return () => req.destroy();
    });
    return { ok: true, ms: ms(), ...res };
  } catch (err) {
    return { ok: false, ms: ms(), ...describeNetError(err, host) };
  }
}

/** A TCP connection (with a TLS handshake when `tls`), and the first line the server sends when `firstLine`. */
export async function probeSocket(
  host: string,
  port: number,
  o: ProbeOptions & { tls: boolean; firstLine?: boolean },
): Promise<ProbeResult> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  try {
    await resolveHost(host, o.timeoutMs);
    const left = Math.max(1, o.timeoutMs - ms());
    const line = await bounded<string | undefined>(`connecting to ${host}:${port}`, left, (settle) => {
      const sock: Socket = o.tls
        ? tlsConnect({ host, port, ...(isIP(host) === 0 ? { servername: host } : {}), ...(o.ca ? { ca: o.ca } : {}) })
        : netConnect({ host, port });
      const ready = () => {
        if (!o.firstLine) return settle(null);
        let buf = '';
        sock.on('data', (d: Buffer) => {
          buf += d.toString('utf8');
          const nl = buf.indexOf('\n');
          if (nl >= 0) settle(null, buf.slice(0, nl).trim());
        });
      };
      sock.once(o.tls ? 'secureConnect' : 'connect', ready);
      sock.on('error', (err) => settle(err));
      return () => sock.destroy();
    });
    return { ok: true, ms: ms(), ...(line !== undefined ? { firstLine: line } : {}) };
  } catch (err) {
    return { ok: false, ms: ms(), ...describeNetError(err, host) };
  }
}
