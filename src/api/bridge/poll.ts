import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BridgeHub } from '../../platforms/bridge/hub.js';
import type { BridgeSession } from '../../platforms/bridge/session.js';
import { MAX_MESSAGE_BYTES } from '../../protocols/bridge/validate.js';
import { PollSocket } from './poll-socket.js';

export const BRIDGE_POLL_PATH = '/bridge/v1/poll';
/** Names the long-polling connection a poll belongs to: answered on the hello's poll, sent back on every later one. */
export const SESSION_HEADER = 'bridge-session';

export interface PollOptions {
  /** The longest a poll is held while there is nothing to say (the `wait` query asks for less). */
  maxWaitSec: number;
  /**
   * A connection with no poll held and none for this long is gone (the terminal lost its network): a new hello
   * for its account replaces it instead of being refused as a second EA.
   */
  staleMs: number;
  /** A connection with no poll for this long is ended (its account shows disconnected). */
  idleMs: number;
}

export const POLL_DEFAULTS: PollOptions = { maxWaitSec: 25, staleMs: 2_000, idleMs: 60_000 };

interface PollConnection {
  id: string;
  tokenId: string;
  accountId: string;
  socket: PollSocket;
  session: BridgeSession;
  holding: number;
  lastPollAt: number;
  idle: NodeJS.Timeout | null;
}

export interface PollCaller {
  tokenId: string;
  accountId: string;
  login: string;
}

/**
 * MT4's transport (docs/bridge-protocol.md, section 1): each POST carries the EA's messages as a JSON array and
 * is answered with the service's messages, held up to `wait` seconds while there is nothing to say. The messages,
 * their schemas and the session rules are the WebSocket's: a connection here is a `BridgeSession` whose frames
 * arrive in polls. Token and rate checks happen before this (endpoint.ts).
 */
export class BridgePollServer {
  private readonly conns = new Map<string, PollConnection>();

  constructor(
    private readonly hub: BridgeHub,
    private readonly opts: PollOptions,
    private readonly now: () => number,
  ) {}

  async handle(req: IncomingMessage, res: ServerResponse, who: PollCaller): Promise<void> {
    const text = await readBody(req, MAX_MESSAGE_BYTES);
    const sid = req.headers[SESSION_HEADER];
    const known = typeof sid === 'string' ? this.conns.get(sid) : undefined;
    if (sid !== undefined && (!known || known.tokenId !== who.tokenId))
      return answer(res, fatal('session_expired', 'this long-polling connection is over; say hello again'));
    const msgs = parseBody(text);
    let conn = known;
    if (!conn) {
      if (!Array.isArray(msgs)) return answer(res, fatal(msgs.code, msgs.message));
      if (msgs.length === 0) return answer(res, fatal('hello_expected', 'the first poll must carry hello'));
      this.endStale(who.accountId);
      conn = this.open(who);
    }
    const c = conn;
    if (c.idle) clearTimeout(c.idle);
    c.holding++;
    c.socket.release();
    if (!Array.isArray(msgs)) c.session.refuse(msgs.code, msgs.message, true);
    else for (const m of msgs) if (!c.socket.closed) c.session.onFrame(JSON.stringify(m));
    // What the frames caused (a `received` is sent in a microtask) leaves with this answer.
    await new Promise((r) => setImmediate(r));
    let gone = false;
    res.once('close', () => {
      if (!res.writableEnded) {
        gone = true;
        c.socket.release();
      }
    });
    await c.socket.hold(waitMs(req, this.opts.maxWaitSec));
    c.holding--;
    c.lastPollAt = this.now();
    // A held poll whose client went away is the connection lost, as a WebSocket's close is.
    if (gone) return this.end(c);
    if (c.socket.pending && !c.socket.closed) await new Promise((r) => setImmediate(r));
    const body = c.socket.take();
    if (c.socket.closed) this.end(c);
    else if (c.holding === 0) c.idle = setTimeout(() => this.end(c), this.opts.idleMs);
    answer(res, body, c.socket.closed ? undefined : c.id);
  }

  /** Ends every connection (the endpoint is closing). */
  close(): void {
    for (const c of [...this.conns.values()]) this.end(c);
  }

  private open(who: PollCaller): PollConnection {
    const socket = new PollSocket();
    const session = this.hub.open(socket, { id: who.accountId, login: who.login, tokenId: who.tokenId });
    const c: PollConnection = {
      id: randomBytes(18).toString('base64url'),
      tokenId: who.tokenId,
      accountId: who.accountId,
      socket,
      session,
      holding: 0,
      lastPollAt: this.now(),
      idle: null,
    };
    this.conns.set(c.id, c);
    return c;
  }

  private endStale(accountId: string): void {
    const t = this.now();
    for (const c of this.conns.values())
      if (c.accountId === accountId && c.holding === 0 && t - c.lastPollAt >= this.opts.staleMs) this.end(c);
  }

  private end(c: PollConnection): void {
    if (!this.conns.delete(c.id)) return;
    if (c.idle) clearTimeout(c.idle);
    c.socket.close();
    c.session.onClose();
  }
}

type BodyRefusal = { code: string; message: string };

function parseBody(text: string | null): unknown[] | BodyRefusal {
  if (text === null) return { code: 'message_too_large', message: `poll body over ${MAX_MESSAGE_BYTES} bytes` };
  let v: unknown;
  try {
    v = JSON.parse(text === '' ? '[]' : text);
  } catch {
    return { code: 'malformed_json', message: 'the poll body is not JSON' };
  }
  if (!Array.isArray(v)) return { code: 'schema_violation', message: 'the poll body must be a JSON array of messages' };
  return v;
}

/** `?wait=` seconds (0 answers at once), at most `max`; anything else is `max`. */
function waitMs(req: IncomingMessage, max: number): number {
  const q = new URL(req.url ?? '/', 'http://x').searchParams.get('wait');
  const n = q === null ? Number.NaN : Number(q);
  return Math.round((Number.isFinite(n) && n >= 0 ? Math.min(n, max) : max) * 1000);
}

function fatal(code: string, message: string): string {
  return JSON.stringify([{ type: 'error', code, message, fatal: true }]);
}

function answer(res: ServerResponse, body: string, session?: string): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(200, {
    'content-type': 'application/json',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(body),
    ...(session ? { [SESSION_HEADER]: session } : {}),
  });
  res.end(body);
}

function readBody(req: IncomingMessage, max: number): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (b: Buffer) => {
      size += b.length;
      if (size <= max) chunks.push(b);
    });
    req.on('end', () => resolve(size > max ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(null));
  });
}
