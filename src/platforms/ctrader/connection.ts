import { isIP } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { AppError } from '../../domain/errors.js';
import { passWriteGate } from '../../domain/write-gate.js';
import {
  ConnectionLostError,
  NotSentError,
  OpenApiError,
  RequestTimeoutError,
  TOKEN_CODES,
  readError,
} from './errors.js';
import { decodeEnvelope, encodeEnvelope } from '../../protocols/ctrader/codec.js';
import { ExecutionType } from '../../protocols/ctrader/enums.js';
import { FrameReader, frame } from '../../protocols/ctrader/framing.js';
import type {
  Envelope,
  ErrorResMsg,
  ExecutionEventMsg,
  OrderErrorEventMsg,
  RefreshTokenResMsg,
  TokenInvalidatedEventMsg,
} from '../../protocols/ctrader/messages.js';
import { HISTORICAL_REQUESTS, PT } from '../../protocols/ctrader/payload-types.js';
import { RateWindow } from './rate-window.js';
import { TokenRefresher, type CTraderTokens } from './tokens.js';

export interface CTraderEndpoint {
  host: string;
  port: number;
  /** PEM to trust (the simulator's self-signed certificate); system CAs when absent. */
  ca?: string;
}

export interface ConnectionOptions {
  endpoint: CTraderEndpoint;
  clientId: string;
  clientSecret: string;
  /** Session requests (auth, refresh) and the default for account requests. */
  requestTimeoutMs?: number;
  /** Send a heartbeat after this much silence; the proto asks for one at least every 30 s. */
  heartbeatMs?: number;
  /** Nothing received for this long (the server heartbeats when idle) means the link is dead. */
  deadAfterMs?: number;
  backoff?: { initialMs: number; maxMs: number };
  /**
   * Our own pacing: at most this many requests (default the platform's 50; 4 of its 5 historical) per RateWindow:
   * a second counted from each request's answer, so no margin on the count or the time is needed (45 a second cost
   * a quarter of the throughput, a 1.2 s window 10-15 %).
   */
  rateLimitPerSecond?: number;
  historicalRateLimitPerSecond?: number;
  /**
   * Places of the window reads never take, kept for trading writes and session requests (default 15 of 50, at most
   * half the window: a fan-out to the 12 accounts a pooled connection holds, and a little more; reads keep 70 % of
   * the window when they alone fill it). See RateWindow.
   */
  writeReserve?: number;
  refresher?: TokenRefresher;
  /**
   * The server refused this connection's application auth with CONNECTIONS_LIMIT_EXCEEDED (too many connections
   * for the application). Called before the connection drops and retries as after any other refusal, so an owner
   * with other connections can hand the accounts over (`handOver`) and close this one instead.
   */
  onConnectionsLimit?(): void;
}

export interface AccountHooks {
  onTokensRefreshed?(tokens: CTraderTokens): Promise<void> | void;
}

type AccountState = 'unauthorised' | 'authorised' | 'reconnect_required' | 'failed';

interface AccountSession {
  ctid: string;
  tokens: CTraderTokens;
  state: AccountState;
  error: AppError | null;
  authPromise: Promise<void> | null;
  listeners: Set<(env: Envelope) => void>;
  hooks: AccountHooks;
  refs: number;
  /** Which authorisation the account is in (unique in the process: accounts move between connections); see accountSession. */
  session: number;
}

interface Pending {
  /** Tells the rate window the request is answered (first message, failure or timeout; once is enough). */
  answered(): void;
  collected: Envelope[];
  collect: ((env: Envelope, all: Envelope[]) => boolean) | undefined;
  resolve(envs: Envelope[]): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout;
}

export interface RequestOptions {
  timeoutMs?: number;
  /** For requests answered by several messages (execution events): true once the answer is complete. */
  collect?: (env: Envelope, all: Envelope[]) => boolean;
  /** Reads: resent once after a reconnect. Writes never are: they may have been applied. */
  idempotent?: boolean;
  /** A trading write: passes the caller's write gate (domain/write-gate.ts) right before its frame is written. */
  write?: boolean;
  /**
   * Aborted while the request still waits for a place in our own rate window: it is not sent and fails with
   * NotSentError (`rate_limited`). Once sent, it runs to its answer or its timeout as any other.
   */
  signal?: AbortSignal;
}

/** Places of a connection's window kept for trading writes: see ConnectionOptions.writeReserve. */
const DEFAULT_WRITE_RESERVE = 15;

/**
 * Reads that go in the writes' lane all the same: an order cannot leave before its account is authorised and its
 * symbol known, and these are asked once a session (after a reconnect every account authorises again, and behind a
 * read burst a fan-out would wait for them as if for the reads themselves). The reads left in the other lane are the
 * ones that recur: health (trader, unrealized P&L), reconciles, history, spot subscriptions.
 */
const SESSION_REQUESTS: ReadonlySet<number> = new Set([
  PT.APPLICATION_AUTH_REQ,
  PT.ACCOUNT_AUTH_REQ,
  PT.REFRESH_TOKEN_REQ,
  PT.SYMBOLS_LIST_REQ,
  PT.SYMBOL_BY_ID_REQ,
  PT.ASSET_LIST_REQ,
]);

/** Numbers account authorisations across connections, so one handed over never repeats a number it had. */
let sessions = 0;

const ACCOUNT_EVENTS: ReadonlySet<number> = new Set([
  PT.EXECUTION_EVENT,
  PT.ORDER_ERROR_EVENT,
  PT.SPOT_EVENT,
  PT.ACCOUNT_DISCONNECT_EVENT,
]);

/**
 * One TLS connection to one Open API endpoint (demo or live host), shared by every account on it: application
 * auth once per connection, account auth per account, heartbeats, request/response matching by clientMsgId,
 * reconnect with exponential backoff re-authorising every account, and token refresh.
 */
export class CTraderConnection {
  private socket: TLSSocket | null = null;
  private open = false;
  private isReady = false;
  private closing = false;
  private fatal: AppError | null = null;
  private attempt = 0;
  private seq = 0;
  private lastRx = 0;
  private lastTx = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private readonly ticker: NodeJS.Timeout;
  private readonly pending = new Map<string, Pending>();
  private readonly accounts = new Map<string, AccountSession>();
  /** Accounts handed over to another connection: calls already on their way here follow them there. */
  private readonly movedTo = new Map<string, CTraderConnection>();
  private readyWaiters: { resolve(): void; reject(err: unknown): void }[] = [];
  private readonly general: RateWindow;
  private readonly historical: RateWindow;
  private readonly refresher: TokenRefresher;
  private readonly timeoutMs: number;
  private readonly heartbeatMs: number;
  private readonly deadAfterMs: number;
  private readonly backoff: { initialMs: number; maxMs: number };
  /** Reconnects so far (tests and health read it). */
  reconnects = 0;
  lastError: string | null = null;

  constructor(private readonly opts: ConnectionOptions) {
    this.timeoutMs = opts.requestTimeoutMs ?? 10_000;
    this.heartbeatMs = opts.heartbeatMs ?? 10_000;
    this.deadAfterMs = opts.deadAfterMs ?? 45_000;
    this.backoff = opts.backoff ?? { initialMs: 250, maxMs: 30_000 };
    const perSecond = opts.rateLimitPerSecond ?? 50;
    this.general = new RateWindow(
      perSecond,
      1_000,
      Date.now,
      opts.writeReserve ?? Math.min(DEFAULT_WRITE_RESERVE, Math.floor(perSecond / 2)),
    );
    this.historical = new RateWindow(opts.historicalRateLimitPerSecond ?? 4);
    this.refresher = opts.refresher ?? new TokenRefresher();
    this.ticker = setInterval(() => this.tick(), Math.max(10, Math.min(this.heartbeatMs, this.deadAfterMs) / 2));
    this.ticker.unref();
  }

  get connected(): boolean {
    return this.isReady;
  }

  accountCount(): number {
    return this.accounts.size;
  }

  /** This connection's own pacing: requests that waited for a place in its window, and places taken now. */
  rateWindow(): { waited: number; held: number } {
    return { waited: this.general.waited, held: this.general.held() };
  }

  accountIds(): string[] {
    return [...this.accounts.keys()];
  }

  // ---- accounts -----------------------------------------------------------------------------------------

  /** Registers an account on this connection (authorised lazily, and again after every reconnect). */
  addAccount(ctid: string, tokens: CTraderTokens, hooks: AccountHooks = {}): void {
    this.movedTo.delete(ctid);
    const existing = this.accounts.get(ctid);
    if (existing) {
      existing.refs += 1;
      return;
    }
    this.accounts.set(ctid, {
      ctid,
      tokens,
      state: 'unauthorised',
      error: null,
      authPromise: null,
      listeners: new Set(),
      hooks,
      refs: 1,
      session: 0,
    });
  }

  /** Returns true when no account is left (the owner may close the connection). */
  removeAccount(ctid: string): boolean {
    const acc = this.accounts.get(ctid);
    if (acc && --acc.refs <= 0) this.accounts.delete(ctid);
    return this.accounts.size === 0;
  }

  /**
   * Moves an account (tokens, hooks, event listeners, references) to another connection, to be authorised there;
   * calls waiting here for it (for this connection to be ready) go on there. Its session here is over, so its
   * position view is not trusted until read again.
   */
  handOver(ctid: string, to: CTraderConnection): void {
    const acc = this.accounts.get(ctid);
    if (!acc || to === this) return;
    this.accounts.delete(ctid);
    this.movedTo.set(ctid, to);
    const there = to.accounts.get(ctid);
    if (there) {
      there.refs += acc.refs;
      for (const l of acc.listeners) there.listeners.add(l);
      return;
    }
    const state: AccountState = acc.state === 'authorised' ? 'unauthorised' : acc.state;
    to.accounts.set(ctid, { ...acc, state, authPromise: null, session: 0 });
    to.movedTo.delete(ctid);
    if (to.isReady && state === 'unauthorised') to.authorise(to.accounts.get(ctid)!).catch(() => {});
  }

  accountStatus(ctid: string): { state: AccountState; error: AppError | null } | null {
    const acc = this.accounts.get(ctid);
    return acc ? { state: acc.state, error: acc.error } : null;
  }

  /**
   * The account's current authorisation on this connection, or null while it has none. The server pushes an
   * account's execution events only while it is authorised, so two reads of the same number mean no event of the
   * account can have been missed between them; a different number (re-authorised after a reconnect, an account
   * disconnect, a token refusal) means some may have been.
   */
  accountSession(ctid: string): number | null {
    const acc = this.accounts.get(ctid);
    return acc?.state === 'authorised' ? acc.session : null;
  }

  currentTokens(ctid: string): CTraderTokens | null {
    return this.accounts.get(ctid)?.tokens ?? null;
  }

  onAccountEvent(ctid: string, listener: (env: Envelope) => void): () => void {
    const acc = this.mustAccount(ctid);
    acc.listeners.add(listener);
    return () => acc.listeners.delete(listener);
  }

  /**
   * Makes sure the account is usable now: connected, app-authorised, account-authorised. With a `signal` (a caller
   * that gives up by itself: health reads), the authorisation is waited for however long its request queues behind
   * our own (each request sent still has its own timeout), until the signal; without, for `timeoutMs`. At 10,000
   * accounts, 5,405 first health reads failed as "authorising: no answer within 5000 ms", their auth still queued.
   */
  async ensureAccount(ctid: string, timeoutMs = this.timeoutMs, signal?: AbortSignal): Promise<void> {
    const moved = this.movedTo.get(ctid);
    if (moved) return moved.ensureAccount(ctid, timeoutMs, signal);
    try {
      await this.ensureHere(ctid, timeoutMs, signal);
    } catch (err) {
      // Handed over while it waited here (this connection was refused): it is authorised where it went instead.
      const to = this.movedTo.get(ctid);
      if (to && !signal?.aborted) return to.ensureAccount(ctid, timeoutMs, signal);
      throw err;
    }
  }

  private async ensureHere(ctid: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const acc = this.mustAccount(ctid);
    if (acc.state === 'reconnect_required' || acc.state === 'failed')
      throw new NotSentError(acc.error!.message, acc.error!);
    await this.whenReady(timeoutMs);
    if (acc.state === 'authorised') return;
    const queuedAt = Date.now();
    try {
      await (signal
        ? untilAborted(this.authorise(acc), signal)
        : withTimeout(this.authorise(acc), timeoutMs, () => new RequestTimeoutError(timeoutMs, [])));
    } catch (err) {
      if (signal?.aborted) throw this.gaveUp(Date.now() - queuedAt, `cTrader account ${ctid}'s authorisation`);
      const app = acc.error ?? readError(err, `authorising cTrader account ${ctid}`);
      throw new NotSentError(app.message, app);
    }
  }

  /**
   * A request on behalf of an account. A token or not-authorised refusal is definite (nothing applied), so it
   * is resent once after re-authorising; a dropped connection is resent only for idempotent requests.
   */
  async accountRequest(
    ctid: string,
    payloadType: number,
    body: Record<string, unknown>,
    ro: RequestOptions = {},
  ): Promise<Envelope[]> {
    const moved = this.movedTo.get(ctid);
    if (moved) return moved.accountRequest(ctid, payloadType, body, ro);
    const acc = this.mustAccount(ctid);
    const timeoutMs = ro.timeoutMs ?? this.timeoutMs;
    let retried = false;
    for (;;) {
      // Handed over meanwhile: nothing of this request was written here (NotSentError), so it goes there whole.
      const to = this.movedTo.get(ctid);
      if (to) return to.accountRequest(ctid, payloadType, body, ro);
      try {
        await this.ensureHere(ctid, timeoutMs, ro.signal);
      } catch (err) {
        if (this.movedTo.has(ctid) && !ro.signal?.aborted) continue;
        if (retried && err instanceof NotSentError && err.appError.code === 'reconnect_required') {
          throw new OpenApiError('CH_ACCESS_TOKEN_INVALID', err.message, 'error_res');
        }
        throw err;
      }
      try {
        // Object.assign, not `{ ...body, ctidTraderAccountId }`: on Node 20 a key added after a spread makes a new hidden
        // class per request, and the encoder then reads every body through its slow path.
        return await this.request(
          payloadType,
          Object.assign({}, body, { ctidTraderAccountId: ctid }),
          Object.assign({}, ro, { timeoutMs }),
        );
      } catch (err) {
        // Never written here, and the account has moved: the loop sends it there.
        if (err instanceof NotSentError && !ro.signal?.aborted && this.movedTo.has(ctid)) continue;
        if (retried) throw err;
        if (
          err instanceof OpenApiError &&
          (TOKEN_CODES.has(err.errorCode) || err.errorCode === 'ACCOUNT_NOT_AUTHORIZED')
        ) {
          if (acc.state === 'authorised') acc.state = 'unauthorised';
          retried = true;
          continue;
        }
        // Never written: safe to send again once the connection is back, even for a write (not when given up on).
        if (err instanceof NotSentError && !ro.signal?.aborted) {
          retried = true;
          continue;
        }
        if (ro.idempotent && err instanceof ConnectionLostError) {
          retried = true;
          continue;
        }
        throw err;
      }
    }
  }

  // ---- session requests -----------------------------------------------------------------------------------

  /** Writes one request and resolves with its answer (all messages carrying its clientMsgId). */
  async request(payloadType: number, body: Record<string, unknown>, ro: RequestOptions = {}): Promise<Envelope[]> {
    const timeoutMs = ro.timeoutMs ?? this.timeoutMs;
    const socket = this.socket;
    const queuedAt = Date.now();
    let history: { answered(): void } | null = null;
    let slot: { answered(): void };
    try {
      history = HISTORICAL_REQUESTS.has(payloadType) ? await this.historical.acquire(ro.signal) : null;
      slot = await this.general.acquire(ro.signal, ro.write || SESSION_REQUESTS.has(payloadType) ? 'write' : 'read');
    } catch (err) {
      history?.answered();
      if (!ro.signal?.aborted) throw err;
      throw this.gaveUp(Date.now() - queuedAt, 'the request');
    }
    // The window counts a request until a second after its first answer (or its failure): see RateWindow.
    const answered = () => {
      history?.answered();
      slot.answered();
    };
    // While we waited for a slot the link may have dropped or been replaced by one not yet authorised.
    const usable = payloadType === PT.APPLICATION_AUTH_REQ ? this.open : this.isReady;
    if (!socket || this.socket !== socket || !usable) {
      answered();
      throw new NotSentError(
        'not connected',
        new AppError('upstream_unavailable', 'cTrader connection is down', { retryable: true }),
      );
    }
    if (ro.write) {
      try {
        passWriteGate();
      } catch (err) {
        // Refused before a byte left: the place taken in the window must come back, or it is held for ever (it
        // expires only a second after an answer that never comes), and once the window is full of them every
        // request on the connection waits for ever.
        answered();
        throw err;
      }
    }
    const id = `ct${++this.seq}`;
    return new Promise<Envelope[]>((resolve, reject) => {
      const p: Pending = {
        answered,
        collected: [],
        collect: ro.collect,
        resolve,
        reject,
        timer: setTimeout(() => {
          answered();
          this.pending.delete(id);
          reject(new RequestTimeoutError(timeoutMs, p.collected));
        }, timeoutMs),
      };
      this.pending.set(id, p);
      this.write(payloadType, body, id);
    });
  }

  /** A request its caller gave up on while it (or the account's authorisation) waited behind our own requests. */
  private gaveUp(waited: number, what: string): NotSentError {
    const rate = this.opts.rateLimitPerSecond ?? 50;
    return new NotSentError(
      `not sent: given up after ${waited} ms while ${what} waited for our own pacing (${rate} requests a second on this connection)`,
      new AppError(
        'rate_limited',
        `given up after ${waited} ms behind our own requests on the cTrader connection; not sent`,
        {
          retryable: true,
        },
      ),
    );
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.ticker);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.failPending(new ConnectionLostError('connection closed by us', []));
    for (const w of this.readyWaiters.splice(0))
      w.reject(
        new NotSentError('connection closed', new AppError('upstream_unavailable', 'cTrader connection closed')),
      );
    const s = this.socket;
    this.socket = null;
    if (s && !s.destroyed) {
      await new Promise<void>((resolve) => {
        s.once('close', () => resolve());
        s.end();
        setTimeout(() => s.destroy(), 200).unref();
      });
    }
  }

  /** Connected and application-authorised (connects on first use). */
  ready(timeoutMs = this.timeoutMs): Promise<void> {
    return this.whenReady(timeoutMs);
  }

  // ---- connection lifecycle -------------------------------------------------------------------------------

  private whenReady(timeoutMs: number): Promise<void> {
    if (this.fatal) return Promise.reject(new NotSentError(this.fatal.message, this.fatal));
    if (this.closing)
      return Promise.reject(
        new NotSentError('connection closed', new AppError('upstream_unavailable', 'cTrader connection closed')),
      );
    if (this.isReady) return Promise.resolve();
    if (!this.socket && !this.reconnectTimer) this.connect();
    return new Promise<void>((resolve, reject) => {
      const w = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      const timer = setTimeout(() => {
        this.readyWaiters = this.readyWaiters.filter((x) => x !== w);
        const why = this.lastError ? ` (${this.lastError})` : '';
        reject(
          new NotSentError(
            `not connected within ${timeoutMs} ms${why}`,
            new AppError('upstream_unavailable', `cTrader endpoint unreachable${why}`, { retryable: true }),
          ),
        );
      }, timeoutMs);
      this.readyWaiters.push(w);
    });
  }

  private connect(): void {
    this.reconnectTimer = null;
    if (this.closing) return;
    const { host, port, ca } = this.opts.endpoint;
    const socket = tlsConnect({ host, port, ...(ca ? { ca } : {}), ...(isIP(host) ? {} : { servername: host }) });
    this.socket = socket;
    const reader = new FrameReader();
    socket.setNoDelay(true);
    socket.once('secureConnect', () => {
      this.open = true;
      this.lastRx = Date.now();
      void this.onOpen(socket);
    });
    socket.on('data', (chunk: Buffer) => {
      if (this.socket !== socket) return;
      this.lastRx = Date.now();
      let frames: Buffer[];
      try {
        frames = reader.push(chunk);
      } catch (err) {
        this.lastError = (err as Error).message;
        return void socket.destroy();
      }
      for (const f of frames) {
        let env: Envelope;
        try {
          env = decodeEnvelope(f);
        } catch (err) {
          this.lastError = `undecodable frame: ${(err as Error).message}`;
          continue;
        }
        this.dispatch(env);
      }
    });
    socket.on('error', (err) => {
      this.lastError = err.message;
    });
    socket.once('close', () => this.onClose(socket));
  }

  private async onOpen(socket: TLSSocket): Promise<void> {
    try {
      await this.request(PT.APPLICATION_AUTH_REQ, {
        clientId: this.opts.clientId,
        clientSecret: this.opts.clientSecret,
      });
    } catch (err) {
      if (!(err instanceof OpenApiError && err.errorCode === 'CH_CLIENT_ALREADY_AUTHENTICATED')) {
        if (err instanceof OpenApiError && err.errorCode === 'CONNECTIONS_LIMIT_EXCEEDED') {
          this.lastError = (err as Error).message;
          this.opts.onConnectionsLimit?.();
        } else if (
          err instanceof OpenApiError &&
          (err.errorCode === 'CH_CLIENT_AUTH_FAILURE' || err.errorCode === 'CH_OA_CLIENT_NOT_FOUND')
        ) {
          // Wrong application credentials do not heal by retrying: stop and say so.
          this.fatal = readError(err, 'cTrader application auth');
          for (const w of this.readyWaiters.splice(0)) w.reject(new NotSentError(this.fatal.message, this.fatal));
        }
        this.lastError = (err as Error).message;
        socket.destroy();
        return;
      }
    }
    if (this.socket !== socket) return;
    this.isReady = true;
    this.attempt = 0;
    for (const w of this.readyWaiters.splice(0)) w.resolve();
    // Every account lost its session with the old connection; authorise them again without waiting for a caller,
    // so streamed execution events resume at once.
    for (const acc of this.accounts.values()) {
      if (acc.state === 'authorised') acc.state = 'unauthorised';
      if (acc.state === 'unauthorised') this.authorise(acc).catch(() => {});
    }
  }

  private onClose(socket: TLSSocket): void {
    if (this.socket !== socket && this.socket !== null) return;
    this.open = false;
    this.isReady = false;
    this.socket = null;
    this.failPending(new ConnectionLostError(this.lastError ?? 'socket closed', []));
    for (const acc of this.accounts.values()) if (acc.state === 'authorised') acc.state = 'unauthorised';
    if (this.closing || this.fatal) return;
    const base = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** this.attempt);
    this.attempt += 1;
    this.reconnects += 1;
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
    this.reconnectTimer.unref();
  }

  private failPending(err: ConnectionLostError): void {
    for (const [id, p] of this.pending) {
      p.answered();
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.reject(new ConnectionLostError(err.message.replace(/^connection lost: /, ''), p.collected));
    }
  }

  private tick(): void {
    if (!this.open || !this.socket) return;
    const now = Date.now();
    if (now - this.lastRx > this.deadAfterMs) {
      this.lastError = `no traffic for ${now - this.lastRx} ms`;
      this.socket.destroy();
      return;
    }
    if (now - this.lastTx >= this.heartbeatMs) this.write(PT.HEARTBEAT_EVENT, {});
  }

  private write(payloadType: number, body: Record<string, unknown>, clientMsgId?: string): void {
    if (!this.socket || !this.open) return;
    this.lastTx = Date.now();
    this.socket.write(frame(encodeEnvelope(payloadType, body, clientMsgId)));
  }

  // ---- inbound ------------------------------------------------------------------------------------------

  private dispatch(env: Envelope): void {
    const p = env.clientMsgId ? this.pending.get(env.clientMsgId) : undefined;
    if (p) {
      p.answered();
      this.answer(env.clientMsgId!, p, env);
    }
    if (ACCOUNT_EVENTS.has(env.payloadType)) {
      const ctid = String((env.payload as { ctidTraderAccountId?: string } | null)?.ctidTraderAccountId ?? '');
      const acc = this.accounts.get(ctid);
      if (!acc) return;
      if (env.payloadType === PT.ACCOUNT_DISCONNECT_EVENT) {
        if (acc.state === 'authorised') acc.state = 'unauthorised';
        this.authorise(acc).catch(() => {});
        return;
      }
      for (const l of acc.listeners) l(env);
      return;
    }
    if (env.payloadType === PT.ACCOUNTS_TOKEN_INVALIDATED_EVENT) {
      const ev = env.payload as unknown as TokenInvalidatedEventMsg;
      this.lastError = `tokens invalidated: ${ev.reason ?? 'no reason given'}`;
      for (const id of ev.ctidTraderAccountIds ?? []) {
        const acc = this.accounts.get(String(id));
        if (!acc || acc.state === 'reconnect_required' || acc.state === 'failed') continue;
        acc.state = 'unauthorised';
        // Re-authorise now: with the current token if it was already refreshed, else refresh first.
        this.authorise(acc).catch(() => {});
      }
    } else if (env.payloadType === PT.CLIENT_DISCONNECT_EVENT) {
      this.lastError = `server disconnect: ${(env.payload as { reason?: string } | null)?.reason ?? 'no reason given'}`;
    }
  }

  private answer(id: string, p: Pending, env: Envelope): void {
    const settle = (fn: () => void) => {
      clearTimeout(p.timer);
      this.pending.delete(id);
      fn();
    };
    if (env.payloadType === PT.OA_ERROR_RES || env.payloadType === PT.ERROR_RES) {
      const e = env.payload as unknown as ErrorResMsg;
      const retryAfter = e.retryAfter !== undefined ? Number(e.retryAfter) : undefined;
      return settle(() => p.reject(new OpenApiError(e.errorCode, e.description ?? '', 'error_res', retryAfter)));
    }
    if (env.payloadType === PT.ORDER_ERROR_EVENT) {
      const e = env.payload as unknown as OrderErrorEventMsg;
      return settle(() => p.reject(new OpenApiError(e.errorCode, e.description ?? '', 'order_error_event')));
    }
    if (env.payloadType === PT.EXECUTION_EVENT) {
      const e = env.payload as unknown as ExecutionEventMsg;
      if (e.executionType === ExecutionType.ORDER_REJECTED || e.executionType === ExecutionType.ORDER_CANCEL_REJECTED) {
        return settle(() =>
          p.reject(new OpenApiError(e.errorCode ?? 'ORDER_REJECTED', 'rejected by the broker', 'execution_rejected')),
        );
      }
    }
    p.collected.push(env);
    if (!p.collect || p.collect(env, p.collected)) settle(() => p.resolve(p.collected));
  }

  // ---- account auth and tokens ------------------------------------------------------------------------------

  private authorise(acc: AccountSession): Promise<void> {
    acc.authPromise ??= (async () => {
      try {
        await this.authOnce(acc);
      } catch (err) {
        if (!(err instanceof OpenApiError && TOKEN_CODES.has(err.errorCode))) {
          if (err instanceof OpenApiError && err.errorCode === 'CH_CTID_TRADER_ACCOUNT_NOT_FOUND') {
            acc.state = 'failed';
            acc.error = new AppError('not_found', `cTrader account ${acc.ctid}: ${err.message}`, { cause: err });
          }
          throw err;
        }
        await this.refresh(acc);
        await this.authOnce(acc);
      }
    })().finally(() => {
      acc.authPromise = null;
    });
    return acc.authPromise;
  }

  private async authOnce(acc: AccountSession): Promise<void> {
    try {
      await this.request(PT.ACCOUNT_AUTH_REQ, { ctidTraderAccountId: acc.ctid, accessToken: acc.tokens.accessToken });
    } catch (err) {
      if (!(err instanceof OpenApiError && err.errorCode === 'ALREADY_LOGGED_IN')) throw err;
    }
    acc.session = ++sessions;
    acc.state = 'authorised';
    acc.error = null;
  }

  private async refresh(acc: AccountSession): Promise<void> {
    const spent = acc.tokens.refreshToken;
    try {
      const fresh = await this.refresher.refresh(spent, async () => {
        const [env] = await this.request(PT.REFRESH_TOKEN_REQ, { refreshToken: spent });
        const r = env!.payload as unknown as RefreshTokenResMsg;
        return { accessToken: r.accessToken, refreshToken: r.refreshToken, expiresIn: Number(r.expiresIn) };
      });
      acc.tokens = fresh;
      await acc.hooks.onTokensRefreshed?.(fresh);
    } catch (err) {
      if (err instanceof OpenApiError && TOKEN_CODES.has(err.errorCode)) {
        acc.state = 'reconnect_required';
        acc.error = new AppError(
          'reconnect_required',
          `cTrader access for account ${acc.ctid} was revoked or expired; the user must connect again`,
          { cause: err },
        );
      }
      throw err;
    }
  }

  private mustAccount(ctid: string): AccountSession {
    const acc = this.accounts.get(ctid);
    if (!acc) throw new AppError('internal_error', `cTrader account ${ctid} is not registered on this connection`);
    return acc;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, err: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(err()), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

/** `p`, or the signal's abort first (`p` goes on: a shared authorisation still serves the other callers). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const off = () => reject(signal.reason);
    signal.addEventListener('abort', off, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', off);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', off);
        reject(e);
      },
    );
  });
}
