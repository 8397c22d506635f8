import { subjectMatches, type Bus } from './bus.js';

/** In-process bus: the default for one process (embedded store, demo, tests). */
export class LocalBus implements Bus {
  readonly kind = 'local' as const;
  private readonly subs = new Set<{ pattern: string; handler: (data: string, subject: string) => void }>();

  publish(subject: string, data: string): void {
    // Asynchronous like a network bus, so publishers never run subscriber code inside their own transaction.
    for (const s of this.subs) if (subjectMatches(s.pattern, subject)) queueMicrotask(() => s.handler(data, subject));
  }

  subscribe(pattern: string, handler: (data: string, subject: string) => void): () => void {
    const sub = { pattern, handler };
    this.subs.add(sub);
    return () => this.subs.delete(sub);
  }

  async close(): Promise<void> {
    this.subs.clear();
  }
}
