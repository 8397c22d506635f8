import { connect, RequestError, TimeoutError, type NatsConnection } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Bus } from './bus.js';

/**
 * NATS core pub/sub: signals between the processes of one deployment (several API processes on one
 * PostgreSQL store). Reconnects by itself; while it is down, readers fall back on their polling.
 */
export class NatsBus implements Bus {
  readonly kind = 'nats' as const;
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();

  private constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
  ) {
    void (async () => {
      for await (const st of nc.status()) {
        if (st.type === 'disconnect') this.connected = false;
        else if (st.type === 'reconnect') this.connected = true;
      }
    })().catch(() => undefined);
  }

  /** False from the client's disconnect until its reconnect: what it sends meanwhile waits in its buffer. */
  private connected = true;

  static async connect(url: string, opts: { prefix?: string; name?: string } = {}): Promise<NatsBus> {
    const nc = await connect({
      servers: url,
      name: opts.name ?? 'copytrade',
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      timeout: 5000,
    });
    return new NatsBus(nc, opts.prefix ?? 'copytrade');
  }

  /**
   * Connects, and while the server cannot be reached keeps trying (backoff from `firstWaitMs` doubling up to
   * `maxWaitMs`), telling `onWait` before each wait: a process started before NATS (or during an outage) comes up
   * when it does instead of exiting. Once connected, the client's own reconnection takes over.
   */
  static async connectWhenUp(
    url: string,
    opts: {
      prefix?: string;
      name?: string;
      firstWaitMs?: number;
      maxWaitMs?: number;
      onWait?: (w: { attempt: number; retryInMs: number; error: unknown }) => void | Promise<void>;
    } = {},
  ): Promise<NatsBus> {
    const first = opts.firstWaitMs ?? 250;
    const max = opts.maxWaitMs ?? 5000;
    for (let attempt = 1; ; attempt++) {
      try {
        return await NatsBus.connect(url, opts);
      } catch (error) {
        const retryInMs = Math.min(max, first * 2 ** Math.min(attempt - 1, 20));
        await opts.onWait?.({ attempt, retryInMs, error });
        await sleep(retryInMs);
      }
    }
  }

  publish(subject: string, data: string): void {
    this.nc.publish(`${this.prefix}.${subject}`, this.encoder.encode(data));
  }

  subscribe(subject: string, handler: (data: string, subject: string) => void): () => void {
    const sub = this.nc.subscribe(`${this.prefix}.${subject}`);
    const strip = this.prefix.length + 1;
    void (async () => {
      for await (const m of sub) handler(this.decoder.decode(m.data), m.subject.slice(strip));
    })().catch(() => undefined);
    return () => sub.unsubscribe();
  }

  async ping(): Promise<void> {
    // rtt() refuses at once while the client is disconnected (it reconnects by itself meanwhile).
    await this.nc.rtt();
  }

  /**
   * Request/reply between the processes of a deployment (an order for the worker owning its Master). Rejects
   * with NoResponder when nobody serves the subject now, with ReplyTimeout when the answer did not come in time
   * (the request may still have been acted on).
   */
  async request(subject: string, data: string, timeoutMs: number): Promise<string> {
    // While the client reconnects, a request waits in its buffer and may be delivered, and acted on, after the
    // reconnect, long after its caller gave up on it. Refused before it is sent instead: nothing left, retry.
    if (!this.connected) throw new BusDisconnected(subject);
    try {
      const m = await this.nc.request(`${this.prefix}.${subject}`, this.encoder.encode(data), { timeout: timeoutMs });
      return this.decoder.decode(m.data);
    } catch (err) {
      if (err instanceof RequestError && err.isNoResponders()) throw new NoResponder(subject);
      if (err instanceof TimeoutError || (err instanceof RequestError && err.cause instanceof TimeoutError))
        throw new ReplyTimeout(subject, timeoutMs);
      throw err;
    }
  }

  /**
   * Answers the requests on one subject, one at a time (an account's orders stay in order). `stop` unsubscribes at once; `drain` stops taking requests and
   * resolves once every request already delivered to this process is answered (a request sent after it finds
   * nobody: the requester's NoResponder), bounded by `withinMs` for the unsubscription itself (a cut connection).
   */
  serve(
    subject: string,
    handler: (data: string) => Promise<string>,
  ): { stop(): void; drain(withinMs?: number): Promise<void> } {
    const sub = this.nc.subscribe(`${this.prefix}.${subject}`);
    const loop = (async () => {
      for await (const m of sub) {
        const answer = await handler(this.decoder.decode(m.data)).catch((err: unknown) =>
          JSON.stringify({ ok: false, error: { code: 'internal_error', message: String(err) } }),
        );
        m.respond(this.encoder.encode(answer));
      }
    })().catch(() => undefined);
    return {
      stop: () => sub.unsubscribe(),
      drain: async (withinMs = 5_000) => {
        let timer: NodeJS.Timeout | undefined;
        const drained = sub.drain().catch(() => sub.unsubscribe());
        await Promise.race([
          drained,
          new Promise<void>((r) => {
            timer = setTimeout(() => {
              sub.unsubscribe();
              r();
            }, withinMs);
          }),
        ]);
        clearTimeout(timer);
        await loop;
      },
    };
  }

  async close(): Promise<void> {
    await this.nc.drain().catch(() => this.nc.close());
  }
}

export class NoResponder extends Error {
  constructor(readonly subject: string) {
    super(`nobody serves ${subject} now`);
    this.name = 'NoResponder';
  }
}

export class BusDisconnected extends Error {
  constructor(readonly subject: string) {
    super(`not connected to NATS now: nothing was sent on ${subject}`);
    this.name = 'BusDisconnected';
  }
}

export class ReplyTimeout extends Error {
  constructor(
    readonly subject: string,
    readonly timeoutMs: number,
  ) {
    super(`no answer on ${subject} within ${timeoutMs} ms`);
    this.name = 'ReplyTimeout';
  }
}
