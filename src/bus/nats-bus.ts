import { connect, type NatsConnection } from '@nats-io/transport-node';
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
  ) {}

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

  async close(): Promise<void> {
    await this.nc.drain().catch(() => this.nc.close());
  }
}
