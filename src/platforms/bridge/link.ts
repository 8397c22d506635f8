import type {
  AckMsg,
  CommandMsg,
  EventMsg,
  HeartbeatMsg,
  HelloMsg,
  RequestErrorMsg,
  ServiceMessage,
  SnapshotMsg,
  SnapshotRequestMsg,
  SymbolMsg,
  SymbolRequestMsg,
} from '../../protocols/bridge/schemas.js';

/** The connection an EA holds, as the link sees it (session.ts implements it). */
export interface LinkedSession {
  send(m: ServiceMessage): void;
  /** A protocol error; `fatal` closes the connection after it. */
  refuse(code: string, message: string, fatal: boolean): void;
}

export type Reply = AckMsg | SnapshotMsg | SymbolMsg | RequestErrorMsg;
/** Why a request got no reply: the time ran out, or the connection went first (or was never there). */
export type NoReply = { none: 'timeout' | 'disconnected' | 'not_connected' };

interface Pending {
  resolve(r: Reply | NoReply): void;
  timer: NodeJS.Timeout;
}

export interface LinkListener {
  /** A welcomed session: what happened while none was connected must be reconciled. */
  onSession?(hello: HelloMsg): void;
  onEvent?(e: EventMsg): void;
  onDisconnect?(): void;
}

/**
 * One bridge account's side of the protocol, across its EA's connections: the last processed event sequence
 * number (so a reconnect resumes there), the requests waiting for their reply, what the last hello and
 * heartbeat said. At most one session is attached at a time.
 */
export class BridgeLink {
  private session: LinkedSession | null = null;
  private lastSeq = 0;
  private readonly pending = new Map<string, Pending>();
  private readonly listeners = new Set<LinkListener>();
  private receivedScheduled = false;
  private readonly waiting = new Set<() => void>();
  hello: HelloMsg | null = null;
  heartbeat: (HeartbeatMsg & { receivedAt: number }) | null = null;
  helloAt: number | null = null;

  constructor(
    readonly accountId: string,
    readonly login: string,
  ) {}

  get connected(): boolean {
    return this.session !== null;
  }
  get processedSeq(): number {
    return this.lastSeq;
  }

  /** Attaches a session after its hello; returns where its EA resumes, or null when another EA holds the account. */
  attach(session: LinkedSession, hello: HelloMsg, now: number): number | null {
    if (this.session && this.session !== session) return null;
    // Events the EA no longer holds, or an EA whose numbering started again: the snapshot stands in for them.
    if (this.lastSeq + 1 < hello.oldestSeq || this.lastSeq > hello.lastSeq) this.lastSeq = hello.oldestSeq - 1;
    this.session = session;
    this.hello = hello;
    this.helloAt = now;
    return this.lastSeq;
  }

  /** After the welcome left: listeners reconcile, and requests that waited for a session go. */
  started(): void {
    if (this.hello) for (const l of this.listeners) l.onSession?.(this.hello);
    for (const w of [...this.waiting]) w();
  }

  /**
   * Resolves true once a session is attached (at once when one is), false after `ms` without one: an EA that
   * reconnects a moment after a cut should not fail the request that arrives in that moment.
   */
  whenConnected(ms: number): Promise<boolean> {
    if (this.session) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.waiting.delete(go);
        resolve(ok);
      };
      const go = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      this.waiting.add(go);
    });
  }

  detach(session: LinkedSession): void {
    if (this.session !== session) return;
    this.session = null;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.resolve({ none: 'disconnected' });
    }
    for (const l of this.listeners) l.onDisconnect?.();
  }

  listen(l: LinkListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** An event in order is processed and confirmed; a repeated one is ignored; a gap ends the session. */
  onEvent(session: LinkedSession, e: EventMsg): void {
    if (e.seq <= this.lastSeq) {
      session.refuse('seq_repeated', `event ${e.seq} was processed already (last ${this.lastSeq}); ignored`, false);
      return;
    }
    if (e.seq > this.lastSeq + 1) {
      session.refuse('seq_gap', `event ${e.seq} after ${this.lastSeq}: events are missing; reconnect to resume`, true);
      return;
    }
    this.lastSeq = e.seq;
    for (const l of this.listeners) l.onEvent?.(e);
    this.scheduleReceived();
  }

  onHeartbeat(h: HeartbeatMsg, now: number): void {
    this.heartbeat = { ...h, receivedAt: now };
  }

  /**
   * What the EA's heartbeats say at `now`: `silent` when it has not beaten for `silentMs` (counted from its last
   * heartbeat, or from its hello when it has not beaten since), the heartbeat when one came on the connection now
   * open, `unknown` when it was never heard from or has not beaten since a recent hello.
   */
  beat(now: number, silentMs: number): HeartbeatMsg | 'silent' | 'unknown' {
    if (this.helloAt === null) return 'unknown';
    const hb = this.heartbeat;
    const last = Math.max(this.helloAt, hb?.receivedAt ?? 0);
    if (now - last > silentMs) return 'silent';
    return this.session && hb && hb.receivedAt >= this.helloAt ? hb : 'unknown';
  }

  /** A reply for a request of ours; false when no such request waits (never sent, or answered already). */
  onReply(r: Reply): boolean {
    const p = this.pending.get(r.id);
    if (!p) return false;
    this.pending.delete(r.id);
    clearTimeout(p.timer);
    p.resolve(r);
    return true;
  }

  /**
   * Sends a request and waits for its reply. `beforeSend` runs right before the bytes leave (the write gate);
   * if it throws, nothing is sent and the error propagates.
   */
  request(
    m: CommandMsg | SnapshotRequestMsg | SymbolRequestMsg,
    timeoutMs: number,
    beforeSend?: () => void,
    waitMs = 0,
  ): Promise<Reply | NoReply> {
    if (!this.session && waitMs > 0)
      return this.whenConnected(waitMs).then(() => this.request(m, timeoutMs, beforeSend));
    const session = this.session;
    if (!session) return Promise.resolve({ none: 'not_connected' });
    if (this.pending.has(m.id)) return Promise.resolve({ none: 'timeout' });
    beforeSend?.();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(m.id);
        resolve({ none: 'timeout' });
      }, timeoutMs);
      this.pending.set(m.id, { resolve, timer });
      session.send(m);
    });
  }

  /** One `received` for all events processed in this turn of the event loop. */
  private scheduleReceived(): void {
    if (this.receivedScheduled) return;
    this.receivedScheduled = true;
    queueMicrotask(() => {
      this.receivedScheduled = false;
      this.session?.send({ type: 'received', seq: this.lastSeq });
    });
  }
}
