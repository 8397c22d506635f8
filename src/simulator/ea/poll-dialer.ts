import type { EaConnection, EaDialer, EaHandlers } from './dial.js';

const SESSION_HEADER = 'bridge-session';

/**
 * MT4's transport as an MT4 EA can use it (docs/bridge-protocol.md, section 1): `WebRequest` is synchronous, so
 * one poll at a time; what the EA says while a poll is held goes with the next one. Each poll carries the token
 * and, after the hello's answer, the connection's `Bridge-Session`. A non-200 answer, an answer without the
 * session, or a fatal error ends the connection.
 */
export function pollDialer(o: { waitSec: number }): EaDialer {
  return (url, token, h) => new PollConnection(`${url}?wait=${o.waitSec}`, token, h);
}

class PollConnection implements EaConnection {
  private outbox: string[] = [];
  private session: string | null = null;
  private busy = false;
  private over = false;
  private readonly abort = new AbortController();

  constructor(
    private readonly url: string,
    private readonly token: string,
    private readonly h: EaHandlers,
  ) {
    queueMicrotask(() => {
      if (this.over) return;
      h.onOpen();
      void this.pump();
    });
  }

  send(text: string): void {
    if (this.over) return;
    this.outbox.push(text);
    if (!this.busy) void this.pump();
  }

  cut(): void {
    this.abort.abort();
    this.end();
  }

  close(): void {
    this.cut();
  }

  private async pump(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      while (!this.over) await this.poll();
    } finally {
      this.busy = false;
    }
  }

  private async poll(): Promise<void> {
    const body = `[${this.outbox.join(',')}]`;
    this.outbox = [];
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.token}`,
      'content-type': 'application/json',
    };
    if (this.session) headers[SESSION_HEADER] = this.session;
    let messages: unknown[];
    try {
      const res = await fetch(this.url, { method: 'POST', headers, body, signal: this.abort.signal });
      const text = await res.text();
      const sid = res.headers.get(SESSION_HEADER);
      if (res.status !== 200) return this.end();
      messages = JSON.parse(text) as unknown[];
      if (sid) this.session = sid;
      else if (!this.over) {
        for (const m of messages) this.h.onMessage(JSON.stringify(m));
        return this.end();
      }
    } catch {
      return this.end();
    }
    for (const m of messages) if (!this.over) this.h.onMessage(JSON.stringify(m));
  }

  private end(): void {
    if (this.over) return;
    this.over = true;
    this.h.onClose();
  }
}
