import { PROTOCOL_VERSION, type EaMessage } from '../../protocols/bridge/schemas.js';
import { parseEaMessage } from '../../protocols/bridge/validate.js';
import type { BridgeLink, LinkedSession } from './link.js';
import type { ServiceMessage } from '../../protocols/bridge/schemas.js';

/** The raw connection (a WebSocket in api/bridge); text frames only. */
export interface FrameSocket {
  send(text: string): void;
  close(code: number, reason: string): void;
}

export interface SessionOptions {
  heartbeatSec: number;
  rememberCommands: number;
  /** Events allowed per second on one connection, with a burst of `floodBurst`. */
  floodPerSec: number;
  floodBurst: number;
  /** An EA without a heartbeat this long is gone (default: three heartbeats missed). */
  silentAfterSec?: number;
  now?: () => number;
}

export const SESSION_DEFAULTS: SessionOptions = {
  heartbeatSec: 10,
  rememberCommands: 1000,
  floodPerSec: 500,
  floodBurst: 2000,
};

/** WebSocket close code of a protocol error (4000-4999: private use). */
export const PROTOCOL_CLOSE = 4400;

/**
 * One EA connection: checks every frame against its schema before anything acts on it, requires a hello first,
 * refuses a second EA for the account, limits events per second, and hands what is valid to the account's link.
 * A fatal protocol error is sent as an `error` message and the connection closed; nothing of the refused
 * frame is processed.
 */
export class BridgeSession implements LinkedSession {
  private said = false;
  private closed = false;
  private tokens: number;
  private last: number;
  private readonly now: () => number;

  constructor(
    private readonly socket: FrameSocket,
    private readonly link: BridgeLink,
    private readonly opts: SessionOptions = SESSION_DEFAULTS,
  ) {
    this.now = opts.now ?? Date.now;
    this.tokens = opts.floodBurst;
    this.last = this.now();
  }

  onFrame(raw: string): void {
    if (this.closed) return;
    const parsed = parseEaMessage(raw);
    if (!parsed.ok) return this.refuse(parsed.code, parsed.message, true);
    const m = parsed.msg;
    if (!this.said) return this.onHello(m);
    this.handle(m);
  }

  onClose(): void {
    this.closed = true;
    this.link.detach(this);
  }

  send(m: ServiceMessage): void {
    if (!this.closed) this.socket.send(JSON.stringify(m));
  }

  refuse(code: string, message: string, fatal: boolean): void {
    if (this.closed) return;
    this.send({ type: 'error', code, message: message.slice(0, 512), fatal });
    if (!fatal) return;
    this.closed = true;
    this.link.detach(this);
    this.socket.close(PROTOCOL_CLOSE, code);
  }

  /** The token behind this connection was revoked: end it now. */
  revoke(): void {
    this.refuse('token_revoked', 'the bridge token of this connection was revoked', true);
  }

  private onHello(m: EaMessage): void {
    if (m.type !== 'hello')
      return this.refuse('hello_expected', `the first message must be hello, got ${m.type}`, true);
    if (m.protocol !== PROTOCOL_VERSION)
      return this.refuse(
        'protocol_unsupported',
        `protocol ${m.protocol} is not spoken here (${PROTOCOL_VERSION})`,
        true,
      );
    if (m.login !== this.link.login)
      return this.refuse('login_mismatch', `this token belongs to another login than ${m.login}`, true);
    const resumeFrom = this.link.attach(this, m, this.now());
    if (resumeFrom === null)
      return this.refuse('duplicate_session', `another EA is connected for login ${m.login}`, true);
    this.said = true;
    this.send({
      type: 'welcome',
      protocol: PROTOCOL_VERSION,
      resumeFrom,
      heartbeatSec: this.opts.heartbeatSec,
      rememberCommands: this.opts.rememberCommands,
    });
    this.link.started();
  }

  private handle(m: EaMessage): void {
    switch (m.type) {
      case 'hello':
        return this.refuse('hello_expected', 'a second hello on one connection', true);
      case 'event':
        if (!this.take()) return this.refuse('event_flood', `more than ${this.opts.floodPerSec} events a second`, true);
        return this.link.onEvent(this, m);
      case 'heartbeat':
        return this.link.onHeartbeat(m, this.now());
      default:
        if (!this.link.onReply(m))
          this.refuse('unknown_command', `no request ${m.id} is waiting for a ${m.type}`, false);
    }
  }

  private take(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.opts.floodBurst, this.tokens + ((t - this.last) / 1000) * this.opts.floodPerSec);
    this.last = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
