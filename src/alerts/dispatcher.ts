import type { EventFeed } from '../events/feed.js';
import type { AlertChannelRow, AlertsRepo, NewAlertDelivery } from '../store/repos/alerts.js';
import { retryDelay } from '../webhooks/retry-schedule.js';
import { alertKindOf, enabledKinds, type AlertKind } from './alert-kinds.js';
import { composeMessage, LISTED, type AlertItem } from './message.js';
import type { ChannelSender, SendResult } from './send-result.js';

export interface DispatcherOptions {
  windowMs: number;
  gatherMs: number;
  retryScheduleMs: number[];
  pollMs: number;
  clock?: () => number;
  random?: () => number;
  onError?: (err: unknown, channelId: string) => void;
  onAttempt?: (result: SendResult) => void;
}

/** Events read per page, and at most per message (the rest wait for the next window). */
const PAGE = 500;
const MAX_SCAN = 20_000;
const MAX_TIMER = 2 ** 31 - 1;

interface Gathered {
  counts: Map<AlertKind, number>;
  first: AlertItem[];
  total: number;
  /** The outbox cursor read up to (matching or not). */
  lastCursor: number;
  /** Occurrences that later events fold into, by kind and key (see AlertKind.sameAs). */
  same: Map<string, AlertItem>;
}

/**
 * Turns the event outbox into grouped alert messages. Each channel reads its user's events after its cursor (as a
 * webhook endpoint does), keeps those its user's rules choose, and sends one message for all of them once the
 * gather delay after the first has passed and the window after its last message has closed. A failed message is
 * retried on the schedule (regrouped with what arrived meanwhile), then given up so alerts never stall for good.
 * Every send is an alert_deliveries row. State is in the store, so a restart resumes where the last one stopped.
 */
export class AlertDispatcher {
  private readonly clock: () => number;
  private readonly random: () => number;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private poll: NodeJS.Timeout | null = null;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = 0;
  private wanted: { all: boolean; users: Set<string> } = { all: false, users: new Set() };
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly repo: AlertsRepo,
    private readonly feed: EventFeed,
    private readonly senders: Record<string, ChannelSender>,
    private readonly opts: DispatcherOptions,
  ) {
    this.clock = opts.clock ?? Date.now;
    this.random = opts.random ?? Math.random;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = this.feed.onVisible((userId) => void this.tick(userId));
    this.poll = setInterval(() => void this.tick(), Math.max(10, this.opts.pollMs));
    this.poll.unref();
    void this.tick();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe?.();
    if (this.poll) clearInterval(this.poll);
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** After a user's change: a pass now, if running (tests drive `tick` themselves). */
  nudge(): void {
    if (!this.stopped) void this.tick();
  }

  /**
   * A pass over the enabled channels of one user (an event of theirs became visible) or of everyone (the poll, a
   * timer). Single flight: what is asked during a pass is done in one more pass after it.
   */
  tick(userId?: string): Promise<void> {
    if (userId === undefined) this.wanted.all = true;
    else this.wanted.users.add(userId);
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          const scope = this.wanted;
          this.wanted = { all: false, users: new Set() };
          await this.pass(scope);
        } while (this.again);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  private async pass(scope: { all: boolean; users: Set<string> }): Promise<void> {
    let channels: AlertChannelRow[];
    try {
      channels = scope.all
        ? await this.repo.enabled()
        : (await Promise.all([...scope.users].map((u) => this.repo.enabled(u)))).flat();
    } catch (err) {
      this.opts.onError?.(err, '*');
      return;
    }
    const rules = new Map<string, Promise<Set<string>>>();
    const kindsOf = (userId: string) => {
      let r = rules.get(userId);
      if (!r) rules.set(userId, (r = this.repo.rules(userId).then(enabledKinds)));
      return r;
    };
    const dues = await Promise.all(
      channels.map((ch) =>
        this.runChannel(ch, kindsOf).catch((err: unknown) => {
          this.opts.onError?.(err, ch.id);
          return null;
        }),
      ),
    );
    this.arm(
      dues.filter((d): d is number => d !== null),
      scope.all,
    );
  }

  /**
   * The earliest due channel runs on a timer (the poll is the safety net). A pass over everyone knows every due
   * time and replaces the timer; one user's pass only brings it forward.
   */
  private arm(dues: number[], all: boolean): void {
    if (this.stopped) return;
    const at = dues.length > 0 ? Math.min(...dues) : null;
    if (!all && (at === null || (this.timer && this.timerAt <= at))) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (at === null) return;
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        void this.tick();
      },
      Math.min(MAX_TIMER, Math.max(0, at - this.clock())),
    );
    this.timer.unref();
  }

  /** Sends the channel's message if it is due; returns when it will be due, or null when nothing waits. */
  private async runChannel(ch: AlertChannelRow, kindsOf: (u: string) => Promise<Set<string>>): Promise<number | null> {
    const now = this.clock();
    const g = await this.gather(ch, await kindsOf(ch.userId));
    if (g.total === 0) {
      if (g.lastCursor > ch.deliveredCursor)
        await this.repo.advance(ch.id, ch.deliveredCursor, { deliveredCursor: g.lastCursor, pendingSince: null });
      return null;
    }
    let pendingSince = ch.pendingSince?.getTime() ?? null;
    if (pendingSince === null) {
      pendingSince = now;
      await this.repo.advance(ch.id, ch.deliveredCursor, { pendingSince: new Date(now) });
    }
    const due = Math.max(
      pendingSince + this.opts.gatherMs,
      ch.lastSentAt ? ch.lastSentAt.getTime() + this.opts.windowMs : 0,
      ch.nextAttemptAt?.getTime() ?? 0,
    );
    if (due > now) return due;
    const msg = composeMessage(g.counts, g.first, g.total);
    const sender = this.senders[ch.kind];
    const r: SendResult = sender
      ? await sender.send(ch, msg)
      : { ok: false, status: null, latencyMs: 0, snippet: null, error: `no sender for ${ch.kind}`, retryAfterMs: null };
    return this.settle(ch, g, msg.subject, r);
  }

  private async settle(ch: AlertChannelRow, g: Gathered, subject: string, r: SendResult): Promise<number | null> {
    const now = this.clock();
    const attemptNo = ch.failures + 1;
    const base: NewAlertDelivery = {
      channelId: ch.id,
      attempt: attemptNo,
      status: r.status,
      ok: r.ok,
      latencyMs: r.latencyMs,
      responseSnippet: r.snippet,
      error: r.error,
      nextAttemptAt: null,
      eventCount: g.total,
      firstEventId: g.first[0]?.eventId ?? null,
      lastCursor: g.lastCursor,
      subject,
    };
    this.opts.onAttempt?.(r);
    const done = { deliveredCursor: g.lastCursor, pendingSince: null, failures: 0, nextAttemptAt: null };
    if (r.ok) {
      await this.repo.advance(ch.id, ch.deliveredCursor, { ...done, lastSentAt: new Date(now) }, base);
      return null;
    }
    if (attemptNo > this.opts.retryScheduleMs.length) {
      // Given up: these alerts are dropped (the row says so) and the channel goes on with the next window's.
      const error = `${r.error ?? 'failed'}; given up after ${attemptNo} attempts, these ${g.total} alerts are not sent`;
      await this.repo.advance(ch.id, ch.deliveredCursor, { ...done, lastSentAt: new Date(now) }, { ...base, error });
      return null;
    }
    const next =
      now +
      retryDelay(
        attemptNo,
        { scheduleMs: this.opts.retryScheduleMs, jitter: 0.2, maxRetryAfterMs: 3_600_000 },
        r.retryAfterMs,
        this.random,
      );
    await this.repo.advance(
      ch.id,
      ch.deliveredCursor,
      { failures: attemptNo, nextAttemptAt: new Date(next) },
      { ...base, nextAttemptAt: new Date(next) },
    );
    return next;
  }

  /** The matching events after the channel's cursor: counts per kind and the first few, up to MAX_SCAN read. */
  private async gather(ch: AlertChannelRow, kinds: Set<string>): Promise<Gathered> {
    const g: Gathered = { counts: new Map(), first: [], total: 0, lastCursor: ch.deliveredCursor, same: new Map() };
    for (let read = 0; read < MAX_SCAN; ) {
      const rows = await this.feed.read(ch.userId, g.lastCursor, PAGE);
      for (const row of rows) {
        const data = { ...((row.payload ?? {}) as Record<string, unknown>) };
        const kind = alertKindOf(row.type, data, kinds);
        if (!kind) continue;
        const key = kind.sameAs ? `${kind.kind}|${kind.sameAs(data)}` : null;
        const same = key ? g.same.get(key) : undefined;
        if (same) {
          kind.merge?.(same.data, data);
          same.accounts++;
          continue;
        }
        const item: AlertItem = {
          kind,
          eventId: row.id,
          type: row.type,
          accountId: row.accountId,
          at: row.createdAt,
          data,
          accounts: 1,
        };
        if (key) g.same.set(key, item);
        g.total++;
        g.counts.set(kind, (g.counts.get(kind) ?? 0) + 1);
        if (g.first.length < LISTED) g.first.push(item);
      }
      if (rows.length === 0) break;
      g.lastCursor = rows[rows.length - 1]!.cursor;
      read += rows.length;
      if (rows.length < PAGE) break;
    }
    return g;
  }
}
