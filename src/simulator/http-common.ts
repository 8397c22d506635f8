import type { IncomingMessage } from 'node:http';
import type { ActiveFault } from './contract.js';

const MAX_BODY = 1 << 20;

/**
 * The JSON object body of a request to a REST front end. `fail(status, message)` builds the front end's own
 * error (each platform answers errors in its own shape).
 */
export async function readJsonObject(
  req: IncomingMessage,
  fail: (status: number, message: string) => Error,
): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) throw fail(413, 'body too large');
    chunks.push(c as Buffer);
  }
  if (size === 0) return {};
  try {
    const v = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
    return v as Record<string, unknown>;
  } catch {
    throw fail(400, 'body must be a JSON object');
  }
}

/**
 * "Never answers" faults: keep the socket open until the client gives up, then drop it; `releaseAll` on
 * server close so close() is quick.
 */
export class HeldSockets {
  private readonly held = new Set<NodeJS.Timeout>();

  constructor(private readonly defaultHoldMs: number) {}

  hold(req: IncomingMessage, fault: ActiveFault): void {
    const timer = setTimeout(() => {
      this.held.delete(timer);
      req.socket.destroy();
    }, fault.delayMs ?? this.defaultHoldMs);
    this.held.add(timer);
    req.socket.once('close', () => {
      clearTimeout(timer);
      this.held.delete(timer);
    });
  }

  releaseAll(): void {
    for (const t of this.held) clearTimeout(t);
    this.held.clear();
  }
}
