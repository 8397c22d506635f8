import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  type: string;
  accountId: string | null;
  sequence: number;
  body: string;
  headers: Record<string, string>;
  at: number;
  /** Which of the receiver's secrets verified the signature (by index), or null if none did. */
  verifiedBy: number[];
}

export type Responder = (
  req: Received,
  n: number,
) => { status: number; headers?: Record<string, string>; body?: string };

/**
 * A webhook receiver on 127.0.0.1 that verifies every delivery with the standardwebhooks package. `accepted`
 * holds the deliveries it answered 2xx, `all` every request. It can go down (socket closed) and come back on
 * the same port.
 */
export class Receiver {
  readonly all: Received[] = [];
  readonly accepted: Received[] = [];
  secrets: string[] = [];
  respond: Responder = () => ({ status: 200, body: 'ok' });
  private server: Server | null = null;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async up(): Promise<this> {
    const server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  async down(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  /** Resolves when `pred` holds, polling; fails after `ms`. */
  async until(pred: () => boolean, ms = 10_000, what = 'condition'): Promise<void> {
    const t0 = Date.now();
    while (!pred()) {
      if (Date.now() - t0 > ms)
        throw new Error(
          `receiver: timed out waiting for ${what} (got ${this.accepted.length} accepted, ${this.all.length} requests)`,
        );
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    const verifiedBy = this.secrets.flatMap((s, i) => {
      try {
        new Webhook(s).verify(body, headers);
        return [i];
      } catch {
        return [];
      }
    });
    const parsed = JSON.parse(body) as { id: string; type: string; accountId: string | null; sequence: number };
    const rec: Received = {
      id: parsed.id,
      type: parsed.type,
      accountId: parsed.accountId,
      sequence: parsed.sequence,
      body,
      headers,
      at: Date.now(),
      verifiedBy,
    };
    this.all.push(rec);
    const out = this.respond(rec, this.all.length);
    if (out.status >= 200 && out.status < 300) this.accepted.push(rec);
    res.writeHead(out.status, { 'content-type': 'text/plain', ...(out.headers ?? {}) });
    res.end(out.body ?? '');
  }
}
