import {
  PROTOCOL_VERSION,
  type AckMsg,
  type CommandMsg,
  type EventMsg,
  type ServiceMessage,
} from '../../protocols/bridge/schemas.js';
import { isRetryableRefusal } from '../../protocols/bridge/retcodes.js';
import { parseServiceMessage } from '../../protocols/bridge/validate.js';
import type { SimBrokerApi } from '../contract.js';
import { type EaConnection, type EaDialer, wsDialer } from './dial.js';
import { execute } from './execute.js';
import { answerSnapshot, answerSymbol } from './reads.js';
import { TransactionMapper } from './transactions.js';
import { type EaTransportFaults, seeded } from './transport-faults.js';

export interface SimulatedEaOptions {
  broker: SimBrokerApi;
  accountId: string;
  /** The bridge endpoint: ws(s)://.../bridge/v1/ws for MT5, http(s)://.../bridge/v1/poll with `pollDialer` for MT4. */
  url: string;
  /** The transport: MT5's WebSocket (default) or MT4's long polls (`pollDialer`, poll-dialer.ts). */
  dial?: EaDialer;
  /** What the hello says it runs in; `mt4` goes with the long-polling transport. */
  terminal?: 'mt5' | 'mt4';
  token: string;
  /** Command ids remembered (never executed twice); the service asks for at least its own figure. */
  rememberCommands?: number;
  reconnectMs?: number;
  faults?: EaTransportFaults;
  /** Heartbeats only when asked (`heartbeat()`), for tests that count messages. */
  manualHeartbeat?: boolean;
  /** Events unconfirmed this long are sent again (the real EA does it on its heartbeat timer). */
  retransmitMs?: number;
}

const EA_VERSION = 'sim-1.0.0';
/** Unconfirmed events kept for a resend; past it the oldest go and the service's snapshot stands in. */
const MAX_BUFFER = 1000;

/**
 * An Expert Advisor as the bridge protocol describes it, in TypeScript, on the simulated broker: it dials out,
 * says hello, reports every transaction with a sequence number, resends what the service has not confirmed
 * after a reconnect, executes commands once per id, answers reads, and beats. Faults on its own connection
 * (drop, duplicate, reorder, delay, a cut in the middle of a command) are injected with `faults`.
 */
export class SimulatedEa {
  private ws: EaConnection | null = null;
  private welcomed = false;
  private stopped = false;
  private seq = 0;
  private buffer: EventMsg[] = [];
  private readonly remembered = new Map<string, AckMsg>();
  private remember: number;
  private held: EventMsg | null = null;
  private readonly rand: () => number;
  private readonly mapper: TransactionMapper;
  private readonly offEvents: () => void;
  private timer: NodeJS.Timeout | null = null;
  private beat: NodeJS.Timeout | null = null;
  private resend: NodeJS.Timeout | null = null;
  private readonly sentAt = new Map<number, number>();
  /** What the service said wrong or refused, in order (tests read it). */
  readonly errors: Array<{ code: string; message: string; fatal: boolean }> = [];
  /** How many times a command arrived whose id was already executed (answered from memory). */
  repeatedCommands = 0;
  connects = 0;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly o: SimulatedEaOptions) {
    this.remember = o.rememberCommands ?? 1000;
    this.rand = seeded(o.faults?.seed ?? 1);
    this.mapper = new TransactionMapper(o.broker, o.accountId);
    this.offEvents = o.broker.onEvent((acc, ev) => {
      if (acc !== o.accountId) return;
      for (const t of this.mapper.map(ev)) this.push({ type: 'event', seq: ++this.seq, ...t });
    });
  }

  get connected(): boolean {
    return this.welcomed;
  }
  get lastSeq(): number {
    return this.seq;
  }
  get unconfirmed(): number {
    return this.buffer.length;
  }

  start(): void {
    this.stopped = false;
    this.connect();
  }

  /** Resolves once the service has welcomed this EA (now or after the next connect). */
  whenWelcomed(): Promise<void> {
    if (this.welcomed) return Promise.resolve();
    return new Promise((resolve) => {
      const f = () => {
        this.listeners.delete(f);
        resolve();
      };
      this.listeners.add(f);
    });
  }

  /** Cut the connection now (the terminal lost its network); it reconnects after reconnectMs. */
  disconnect(): void {
    this.ws?.cut();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.offEvents();
    if (this.timer) clearTimeout(this.timer);
    if (this.beat) clearInterval(this.beat);
    if (this.resend) clearInterval(this.resend);
    const ws = this.ws;
    if (ws) {
      const closed = new Promise<void>((r) => {
        this.onClosed = r;
      });
      ws.cut();
      await closed;
    }
  }

  heartbeat(): void {
    const st = this.o.broker.state(this.o.accountId);
    this.send({
      type: 'heartbeat',
      balance: st.balance.toFixed(),
      equity: st.equity.toFixed(),
      tradeAllowed: true,
      time: Date.now(),
    });
  }

  private onClosed: (() => void) | null = null;

  private connect(): void {
    if (this.stopped) return;
    const dial = this.o.dial ?? wsDialer;
    const ws: EaConnection = dial(this.o.url, this.o.token, {
      onOpen: () => {
        this.connects++;
        this.sayHello();
      },
      onMessage: (text) => {
        if (this.ws === ws) this.onFrame(text);
      },
      onClose: () => this.onClose(ws),
    });
    this.ws = ws;
  }

  private onClose(ws: EaConnection): void {
    if (this.ws === ws) this.ws = null;
    this.welcomed = false;
    if (this.beat) clearInterval(this.beat);
    if (this.resend) clearInterval(this.resend);
    this.beat = null;
    this.resend = null;
    this.onClosed?.();
    this.onClosed = null;
    if (!this.stopped) this.timer = setTimeout(() => this.connect(), this.o.reconnectMs ?? 20);
  }

  private sayHello(): void {
    const acc = this.o.broker.account(this.o.accountId)!;
    this.send({
      type: 'hello',
      protocol: PROTOCOL_VERSION,
      ea: EA_VERSION,
      terminal: this.o.terminal ?? 'mt5',
      build: 4755,
      login: acc.login,
      server: acc.meta['server'] ?? 'SimMarkets-Demo',
      company: 'Simulated Markets',
      currency: acc.currency,
      marginMode: acc.hedging ? 'hedging' : 'netting',
      tradeAllowed: true,
      lastSeq: this.seq,
      oldestSeq: this.buffer[0]?.seq ?? this.seq + 1,
    });
  }

  private onFrame(raw: string): void {
    const parsed = parseServiceMessage(raw);
    if (!parsed.ok) {
      // A service this EA cannot understand: stop talking, as the real EA does, and try again later.
      this.errors.push({ code: parsed.code, message: parsed.message, fatal: true });
      this.ws?.close(4400, parsed.code);
      return;
    }
    this.handle(parsed.msg);
  }

  private handle(m: ServiceMessage): void {
    switch (m.type) {
      case 'welcome':
        return this.onWelcome(m.resumeFrom, m.heartbeatSec, m.rememberCommands);
      case 'received':
        this.buffer = this.buffer.filter((e) => e.seq > m.seq);
        for (const seq of this.sentAt.keys()) if (seq <= m.seq) this.sentAt.delete(seq);
        return;
      case 'command':
        return this.onCommand(m);
      case 'snapshot_request':
        return this.sendReply(answerSnapshot(this.o.broker, this.o.accountId, m, this.seq));
      case 'symbol_request':
        return this.sendReply(answerSymbol(this.o.broker, m));
      case 'error':
        this.errors.push({ code: m.code, message: m.message, fatal: m.fatal });
        return;
    }
  }

  private onWelcome(resumeFrom: number, heartbeatSec: number, remember: number): void {
    this.remember = Math.max(this.remember, remember);
    this.welcomed = true;
    this.held = null;
    this.buffer = this.buffer.filter((e) => e.seq > resumeFrom);
    for (const e of this.buffer) this.sendEvent(e);
    // An event lost last has no successor to reveal its gap: what stays unconfirmed is sent again.
    const every = this.o.retransmitMs ?? 200;
    this.resend = setInterval(() => this.retransmit(every), every);
    this.resend.unref();
    if (!this.o.manualHeartbeat) {
      this.beat = setInterval(() => this.heartbeat(), heartbeatSec * 1000);
      this.beat.unref();
    }
    for (const f of [...this.listeners]) f();
  }

  private onCommand(c: CommandMsg): void {
    const f = this.o.faults;
    const known = this.remembered.get(c.id);
    if (known) {
      this.repeatedCommands++;
      this.send({ ...known, repeated: true });
      return;
    }
    if (f?.disconnectBeforeCommand && this.rand() < f.disconnectBeforeCommand) return this.disconnect();
    const ex = execute(this.o.broker, this.o.accountId, c, Date.now);
    if (ex.reset) return this.disconnect();
    if (ex.ack && !isRetryableRefusal(ex.ack.retcode)) this.keep(c.id, ex.ack);
    if (!ex.ack) {
      // The trade may have happened; the terminal would know its result, so remember what it did.
      const done = this.o.broker.findByTag(this.o.accountId, c.comment ?? c.id);
      if (done.order || done.position) this.keep(c.id, this.ackFromTag(c, done));
      return;
    }
    if (f?.disconnectAfterCommand && this.rand() < f.disconnectAfterCommand) return this.disconnect();
    const ack = ex.ack;
    if (ex.delayMs > 0) setTimeout(() => this.send(ack), ex.delayMs);
    else this.send(ack);
  }

  private ackFromTag(c: CommandMsg, done: ReturnType<SimBrokerApi['findByTag']>): AckMsg {
    return {
      type: 'ack',
      id: c.id,
      retcode: 10009,
      message: 'Request completed',
      order: done.order?.id ?? null,
      deal: null,
      position: done.position?.id ?? null,
      volume: done.position?.volume.toFixed() ?? null,
      price: done.position?.openPrice.toFixed() ?? null,
      time: Date.now(),
      repeated: false,
      retryAfterSec: null,
    };
  }

  private keep(id: string, ack: AckMsg): void {
    this.remembered.set(id, ack);
    while (this.remembered.size > this.remember) this.remembered.delete(this.remembered.keys().next().value!);
  }

  private push(e: EventMsg): void {
    this.buffer.push(e);
    if (this.buffer.length > MAX_BUFFER) this.buffer.shift();
    if (this.welcomed) this.sendEvent(e);
  }

  private retransmit(olderThanMs: number): void {
    const limit = Date.now() - olderThanMs;
    for (const e of this.buffer) if ((this.sentAt.get(e.seq) ?? 0) <= limit) this.sendEvent(e);
  }

  /** An event through the injected faults. A lost or late one is resent after the reconnect its gap causes. */
  private sendEvent(e: EventMsg): void {
    this.sentAt.set(e.seq, Date.now());
    if (this.sentAt.size > MAX_BUFFER * 2) this.sentAt.clear();
    const f = this.o.faults;
    if (!f) return this.send(e);
    if (f.drop && this.rand() < f.drop) return;
    if (f.reorder && !this.held && this.rand() < f.reorder) {
      this.held = e;
      return;
    }
    const held = this.held;
    this.held = null;
    if (f.delay && this.rand() < f.delay) {
      const ws = this.ws;
      setTimeout(() => ws === this.ws && this.send(e), Math.floor(this.rand() * (f.delayMaxMs ?? 20)));
    } else this.send(e);
    if (held) this.send(held);
    if (f.duplicate && this.rand() < f.duplicate) this.send(e);
  }

  private sendReply(m: object | null): void {
    if (m) this.send(m);
  }

  private send(m: object): void {
    this.ws?.send(JSON.stringify(m));
  }
}
