import type { EventRow, EventsRepo } from '../store/repos/events.js';

export interface FeedOptions {
  /**
   * How long a missing cursor may stay missing before readers pass it. A cursor is taken from a sequence when
   * a transaction inserts its event, but becomes visible only at commit: on PostgreSQL a later cursor can
   * commit first. Readers that moved past the gap would never see the late event. A gap that stays open this
   * long is a rolled-back transaction (or one held open absurdly long) and is skipped.
   */
  gapGraceMs?: number;
  clock?: () => number;
}

const SCAN = 2000;
/** At start, the tail re-checked for gaps (older rows are taken as settled). */
const START_TAIL = 1000;

/**
 * Gap-free reading of the outbox. Keeps a horizon: the highest cursor below which every cursor is either
 * visible or given up as never coming. Readers (the deliverer, the live stream, the list route) read only up
 * to it, so a reader that resumes from a cursor never skips an event that committed late.
 */
export class EventFeed {
  private horizon: number | null = null;
  private readonly gapSince = new Map<number, number>();
  private readonly listeners = new Set<(userId: string) => void>();
  private running: Promise<void> | null = null;
  private again = false;
  private gapTimer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private readonly grace: number;
  private readonly clock: () => number;

  constructor(
    private readonly repo: EventsRepo,
    opts: FeedOptions = {},
  ) {
    this.grace = opts.gapGraceMs ?? 10_000;
    this.clock = opts.clock ?? Date.now;
  }

  start(): void {
    if (this.unsubscribe) return;
    this.unsubscribe = this.repo.onAppended(() => void this.advance().catch(() => undefined));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (this.gapTimer) clearTimeout(this.gapTimer);
    this.gapTimer = null;
  }

  /** Called with a user id whenever events of that user became readable. */
  onVisible(listener: (userId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The horizon after catching up with everything committed so far. */
  async visibleCursor(): Promise<number> {
    await this.advance();
    return this.horizon ?? 0;
  }

  /** A user's events after `cursor`, in cursor order, never past the horizon. */
  async read(userId: string, cursor: number, limit: number): Promise<EventRow[]> {
    const h = await this.visibleCursor();
    if (cursor >= h) return [];
    return this.repo.between(userId, cursor, h, limit);
  }

  /** Single flight: callers that arrive while a scan runs get one more scan after it, not one each. */
  advance(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.scan();
        } while (this.again);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  private async scan(): Promise<void> {
    if (this.horizon === null) {
      this.horizon = Math.max(0, (await this.repo.topCursor()) - START_TAIL);
    }
    const woken = new Set<string>();
    for (;;) {
      const rows = await this.repo.cursorsAfter(this.horizon, SCAN);
      let blocked = false;
      for (const r of rows) {
        if (r.c !== this.horizon + 1 && !this.gapExpired(this.horizon + 1)) {
          blocked = true;
          break;
        }
        this.horizon = r.c;
        woken.add(r.u);
      }
      for (const k of this.gapSince.keys()) if (k <= this.horizon) this.gapSince.delete(k);
      if (blocked || rows.length < SCAN) break;
    }
    this.armGapTimer();
    for (const u of woken) for (const l of this.listeners) l(u);
  }

  private gapExpired(at: number): boolean {
    const now = this.clock();
    const since = this.gapSince.get(at);
    if (since === undefined) {
      this.gapSince.set(at, now);
      return this.grace <= 0;
    }
    return now - since >= this.grace;
  }

  /** A pending gap must be passed even if nothing else is ever appended. */
  private armGapTimer(): void {
    if (this.gapTimer || this.gapSince.size === 0 || !this.unsubscribe) return;
    const oldest = Math.min(...this.gapSince.values());
    this.gapTimer = setTimeout(
      () => {
        this.gapTimer = null;
        void this.advance().catch(() => undefined);
      },
      Math.max(0, oldest + this.grace - this.clock()) + 5,
    );
    this.gapTimer.unref();
  }
}
