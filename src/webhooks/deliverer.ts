import type { EventFeed } from '../events/feed.js';
import { toWireEvent } from '../events/wire.js';
import type { EventRow } from '../store/repos/events.js';
import type { PostResult } from './http-post.js';
import { retryDelay, type RetryPolicy } from './retry-schedule.js';
import type { WebhookSender } from './sender.js';
import type { EndpointRow, NewAttempt, WebhookRepo } from '../store/repos/webhooks.js';

export interface DelivererOptions extends RetryPolicy {
  failureWindowMs: number;
  pollMs: number;
  batch?: number;
  clock?: () => number;
  random?: () => number;
  onError?: (err: unknown, endpointId: string) => void;
  /** Each delivery attempt's result, once recorded (the metrics count them). */
  onAttempt?: (result: PostResult) => void;
}

interface Lane {
  running: Promise<void> | null;
  again: boolean;
  timer: NodeJS.Timeout | null;
}

const MAX_TIMER = 2 ** 31 - 1;

/**
 * Delivers the outbox to webhook endpoints. One lane per endpoint: events in cursor order after the
 * endpoint's deliveredCursor, one at a time, never skipping a failing event (head-of-line), so every receiver
 * sees each account's events in order. All state is in the store (cursor, failingSince, attempt rows with
 * their next time), so a restart picks up exactly where the last process stopped; a crash between a
 * receiver's 2xx and our commit delivers that event again with the same webhook-id (at least once).
 */
export class WebhookDeliverer {
  private readonly lanes = new Map<string, Lane>();
  private readonly abort = new AbortController();
  private stopped = true;
  private poll: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private readonly clock: () => number;
  private readonly random: () => number;
  private readonly batch: number;

  constructor(
    private readonly repo: WebhookRepo,
    private readonly feed: EventFeed,
    private readonly sender: WebhookSender,
    private readonly opts: DelivererOptions,
  ) {
    this.clock = opts.clock ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.batch = opts.batch ?? 100;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = this.feed.onVisible((userId) => void this.wakeUser(userId));
    this.poll = setInterval(() => void this.sweep(), Math.max(10, this.opts.pollMs));
    void this.sweep();
  }

  /** Stops timers, cuts in-flight posts short (not counted as the receiver's failure) and waits for lanes. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe?.();
    if (this.poll) clearInterval(this.poll);
    this.abort.abort();
    for (const l of this.lanes.values()) if (l.timer) clearTimeout(l.timer);
    await Promise.all([...this.lanes.values()].map((l) => l.running?.catch(() => undefined)));
    this.lanes.clear();
  }

  /** Run an endpoint's lane now (after a user edit; also what the timers and notifications call). */
  kick(endpointId: string): void {
    if (this.stopped) return;
    let lane = this.lanes.get(endpointId);
    if (!lane) {
      lane = { running: null, again: false, timer: null };
      this.lanes.set(endpointId, lane);
    }
    if (lane.running) {
      lane.again = true;
      return;
    }
    const l = lane;
    l.running = (async () => {
      try {
        do {
          l.again = false;
          await this.run(endpointId, l).catch((err: unknown) => this.opts.onError?.(err, endpointId));
        } while (l.again && !this.stopped);
      } finally {
        l.running = null;
      }
    })();
  }

  private async wakeUser(userId: string): Promise<void> {
    try {
      for (const { id } of await this.repo.enabledIds(userId)) this.kick(id);
    } catch (err) {
      this.opts.onError?.(err, '*');
    }
  }

  /** The safety net: events appended by another process, or a lane whose timer did not survive. */
  private async sweep(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.feed.advance();
      for (const { id } of await this.repo.enabledIds()) this.kick(id);
    } catch (err) {
      this.opts.onError?.(err, '*');
    }
  }

  private later(id: string, lane: Lane, at: number): void {
    if (lane.timer) clearTimeout(lane.timer);
    lane.timer = setTimeout(
      () => {
        lane.timer = null;
        this.kick(id);
      },
      Math.min(MAX_TIMER, Math.max(0, at - this.clock())),
    );
  }

  private async run(id: string, lane: Lane): Promise<void> {
    while (!this.stopped) {
      const ep = await this.repo.byId(id);
      if (!ep?.enabled) {
        this.lanes.delete(id);
        return;
      }
      const rows = await this.feed.read(ep.userId, ep.deliveredCursor, this.batch);
      if (rows.length === 0) return;
      const types = ep.eventTypes as string[];
      const head = types.length === 0 ? rows[0]! : rows.find((r) => types.includes(r.type));
      if (!head) {
        await this.repo.skipTo(ep.id, ep.deliveredCursor, rows[rows.length - 1]!.cursor);
        continue;
      }
      if (head !== rows[0]) {
        const before = rows[rows.indexOf(head) - 1]!.cursor;
        await this.repo.skipTo(ep.id, ep.deliveredCursor, before);
        ep.deliveredCursor = before;
      }

      const last = await this.repo.lastScheduled(ep.id, head.id);
      // A user's edit after the last failure (new URL, re-enabled) means: try now, not at the backed-off time.
      if (
        last &&
        !last.ok &&
        last.nextAttemptAt &&
        last.nextAttemptAt.getTime() > this.clock() &&
        last.createdAt > ep.updatedAt
      ) {
        this.later(id, lane, last.nextAttemptAt.getTime());
        return;
      }
      const attemptNo = (last?.attempt ?? 0) + 1;
      // Signed and addressed as the endpoint is now, not as it was when this pass began: a secret rotated (or a URL
      // changed) while the lane read the feed applies to this delivery. Seen in CI: the second event after a
      // rotation with no overlap went out signed with the replaced secrets, read before the rotation committed.
      const current = await this.repo.byId(id);
      if (!current?.enabled) {
        this.lanes.delete(id);
        return;
      }
      const result = await this.sender.send(current, toWireEvent(head), this.abort.signal);
      if (result.aborted) return;
      const continueNow = await this.settle(ep, head, attemptNo, result, lane);
      this.opts.onAttempt?.(result);
      if (!continueNow) return;
    }
  }

  /** Records the attempt and moves the endpoint on; false when the lane must wait (or the endpoint is off). */
  private async settle(ep: EndpointRow, ev: EventRow, attemptNo: number, r: PostResult, lane: Lane): Promise<boolean> {
    const now = this.clock();
    const base: NewAttempt = {
      endpointId: ep.id,
      eventId: ev.id,
      attempt: attemptNo,
      status: r.status,
      ok: r.ok,
      latencyMs: r.latencyMs,
      responseSnippet: r.snippet,
      error: r.error,
      nextAttemptAt: null,
    };
    if (r.ok) {
      await this.repo.delivered(ep.id, ep.deliveredCursor, ev.cursor, base);
      return true;
    }
    const failingSince = ep.failingSince ?? new Date(now);
    if (r.status === 410) {
      await this.disable(ep, 'the endpoint answered 410 Gone', base, failingSince);
      return false;
    }
    if (now - failingSince.getTime() >= this.opts.failureWindowMs) {
      await this.disable(
        ep,
        `no successful delivery since ${failingSince.toISOString()} (failure window ${Math.round(this.opts.failureWindowMs / 1000)} s)`,
        base,
        failingSince,
      );
      return false;
    }
    const next = now + retryDelay(attemptNo + 1, this.opts, r.retryAfterMs, this.random);
    await this.repo.failed(ep.id, failingSince, { ...base, nextAttemptAt: new Date(next) });
    this.later(ep.id, lane, next);
    return false;
  }

  private async disable(ep: EndpointRow, reason: string, attempt: NewAttempt, failingSince: Date): Promise<void> {
    await this.repo.disable(ep, reason, attempt, {
      userId: ep.userId,
      accountId: null,
      type: 'webhook_endpoint.disabled',
      payload: { endpointId: ep.id, url: ep.url, reason, failingSince: failingSince.toISOString() },
    });
  }
}
