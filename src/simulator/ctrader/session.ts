import type { TLSSocket } from 'node:tls';
import { decodeEnvelope, encodeEnvelope } from '../../protocols/ctrader/codec.js';
import { FrameReader, frame } from '../../protocols/ctrader/framing.js';
import type { Envelope } from '../../protocols/ctrader/messages.js';
import { HISTORICAL_REQUESTS, PT } from '../../protocols/ctrader/payload-types.js';
import type { SimEvent } from '../contract.js';
import type { AuthorisedAccount, ClientSession, SimServerContext } from './context.js';
import { peekClientMsgId } from './envelope-peek.js';
import { handleRequest } from './requests.js';
import { serverExecutionEvents, type Reply } from './server-events.js';
import { spotBody } from './spots.js';

/** One client connection: framing, auth state, rate limits, heartbeats, and the events it is owed. */
export class SimSession implements ClientSession {
  appAuthed = false;
  readonly accounts = new Map<string, AuthorisedAccount>();
  /** Spot subscriptions: sim account id -> symbol -> last bid/ask sent. */
  readonly spots = new Map<string, Map<string, string>>();
  private readonly reader = new FrameReader();
  private applyingFor: string | null = null;
  private recent: number[] = [];
  private recentHistorical: number[] = [];
  private lastRx = Date.now();
  private lastTx = Date.now();
  private readonly timers: NodeJS.Timeout[] = [];
  private closed = false;

  constructor(
    readonly ctx: SimServerContext,
    private readonly socket: TLSSocket,
    readonly environment: 'demo' | 'live',
  ) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', () => this.destroy());
    socket.on('close', () => this.teardown());
    const { heartbeatMs, idleTimeoutMs, spotIntervalMs } = ctx.tuning;
    this.timers.push(
      setInterval(
        () => {
          if (Date.now() - this.lastRx > idleTimeoutMs) return this.destroy();
          if (Date.now() - this.lastTx >= heartbeatMs) this.send(PT.HEARTBEAT_EVENT, {});
        },
        Math.max(10, Math.min(heartbeatMs, idleTimeoutMs) / 2),
      ),
      setInterval(() => this.pushSpots(), spotIntervalMs),
    );
    for (const t of this.timers) t.unref();
  }

  send(payloadType: number, body: Record<string, unknown>, clientMsgId?: string): void {
    if (this.closed || this.socket.destroyed) return;
    this.lastTx = Date.now();
    this.socket.write(frame(encodeEnvelope(payloadType, body, clientMsgId)));
  }

  sendAll(replies: Reply[], clientMsgId?: string): void {
    for (const [pt, body] of replies) this.send(pt, body, clientMsgId);
  }

  sendError(
    errorCode: string,
    description: string,
    opts: { clientMsgId?: string | undefined; ctid?: string | undefined; retryAfter?: number | undefined } = {},
  ): void {
    const body: Record<string, unknown> = { errorCode, description };
    if (opts.ctid) body.ctidTraderAccountId = opts.ctid;
    if (opts.retryAfter !== undefined) body.retryAfter = opts.retryAfter;
    this.send(PT.OA_ERROR_RES, body, opts.clientMsgId);
  }

  /** Runs a broker write for this account; the sim's own events for it are answered by the request's reply. */
  applying<T>(simAccountId: string, fn: () => T): T {
    this.applyingFor = simAccountId;
    try {
      return fn();
    } finally {
      this.applyingFor = null;
    }
  }

  onSimEvent(simAccountId: string, ev: SimEvent): void {
    if (this.applyingFor === simAccountId) return;
    const acc = this.accounts.get(simAccountId);
    if (!acc) return;
    this.sendAll(serverExecutionEvents(this.ctx.broker, this.ctx.wire, simAccountId, acc.ctid, ev));
  }

  /** Sessions authorised with a dead token lose those accounts and hear about it (ProtoOAAccountsTokenInvalidatedEvent). */
  dropTokens(accessTokens: string[], reason: string): void {
    const dropped: string[] = [];
    for (const [id, acc] of this.accounts) {
      if (accessTokens.includes(acc.accessToken)) {
        this.accounts.delete(id);
        this.spots.delete(id);
        dropped.push(acc.ctid);
      }
    }
    if (dropped.length > 0) this.send(PT.ACCOUNTS_TOKEN_INVALIDATED_EVENT, { ctidTraderAccountIds: dropped, reason });
  }

  /** Fault `disconnect`: tell the client why, then end the connection. */
  disconnect(reason: string): void {
    this.send(PT.CLIENT_DISCONNECT_EVENT, { reason });
    this.closed = true;
    this.socket.end();
    setTimeout(() => this.socket.destroy(), 200).unref();
  }

  destroy(): void {
    this.closed = true;
    this.socket.destroy();
    this.teardown();
  }

  /** The 50 req/s (5 for history) window per connection; returns seconds to wait when exceeded. */
  rateLimited(payloadType: number): number | null {
    const now = Date.now();
    this.recent = this.recent.filter((t) => now - t < 1000);
    if (this.recent.length >= this.ctx.tuning.rateLimitPerSecond) return this.refused();
    if (HISTORICAL_REQUESTS.has(payloadType)) {
      this.recentHistorical = this.recentHistorical.filter((t) => now - t < 1000);
      if (this.recentHistorical.length >= this.ctx.tuning.historicalRateLimitPerSecond) return this.refused();
      this.recentHistorical.push(now);
    }
    this.recent.push(now);
    return null;
  }

  private refused(): number {
    this.ctx.stats.recordBlocked();
    return 1;
  }

  private onData(chunk: Buffer): void {
    this.lastRx = Date.now();
    let frames: Buffer[];
    try {
      frames = this.reader.push(chunk);
    } catch (err) {
      this.sendError('FRAME_TOO_LONG', (err as Error).message);
      return this.disconnect('frame too long');
    }
    for (const f of frames) {
      let env: Envelope;
      try {
        env = decodeEnvelope(f);
      } catch (err) {
        this.sendError('INVALID_REQUEST', `malformed message: ${(err as Error).message}`, {
          clientMsgId: peekClientMsgId(f),
        });
        continue;
      }
      if (env.payloadType === PT.HEARTBEAT_EVENT) continue;
      const began = performance.now();
      handleRequest(this, env).catch((err: unknown) => {
        this.sendError('UNKNOWN_ERROR', `simulator failure: ${(err as Error).message}`, {
          clientMsgId: env.clientMsgId,
        });
      });
      this.ctx.stats.record(env.payloadType, performance.now() - began);
    }
  }

  private pushSpots(): void {
    for (const [simAccountId, subs] of this.spots) {
      const acc = this.accounts.get(simAccountId);
      if (!acc) continue;
      for (const [symbol, last] of subs) {
        const body = spotBody(this.ctx, acc.ctid, symbol);
        const key = `${body.bid}/${body.ask}`;
        if (key === last) continue;
        subs.set(symbol, key);
        this.send(PT.SPOT_EVENT, body);
      }
    }
  }

  private teardown(): void {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    this.timers.length = 0;
    this.ctx.sessions.delete(this);
  }
}
