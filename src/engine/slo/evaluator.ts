import type { Levels } from '../../domain/slo/levels.js';
import { breachesOf, targetOf, watchesAnything, type Breach, type SloTarget } from '../../domain/slo/target.js';
import type { SloBreachRow, SloTargetRow } from '../../store/repos/slo.js';
import type { Store } from '../../store/store.js';
import { groupLevels, slavesOf } from './slo-levels.js';

/** How often the deployment evaluates every target: a breach is raised at most this long after it shows in the ledger. */
export const SLO_EVALUATE_MS = 15_000;

export interface SloEvaluatorOptions {
  /** The time the rolling windows end at (tests move it). */
  clock?: () => number;
  onError?: (err: unknown) => void;
}

export interface SloRound {
  breached: Array<{ accountId: string; metric: string }>;
  recovered: Array<{ accountId: string; metric: string }>;
}

const key = (accountId: string, metric: string) => `${accountId}|${metric}`;

/**
 * Evaluates each copier group's service-level target against its Slaves' levels over the target's rolling
 * window, on a schedule (the deployment's scheduled work: serve, or the worker holding the deployment lease).
 * A new breach writes `slo.breached` once, with its row in slo_breaches; while it lasts nothing more is written;
 * when the levels meet the target again (or nothing is watched any more) `slo.recovered` ends it. The rows, not
 * this object, say what is open: another process, or this one after a restart, carries on without repeating.
 */
export class SloEvaluator {
  private readonly clock: () => number;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<unknown> | null = null;

  constructor(
    private readonly store: Store,
    private readonly opts: SloEvaluatorOptions = {},
  ) {
    this.clock = opts.clock ?? Date.now;
  }

  start(intervalMs = SLO_EVALUATE_MS): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      // A round still running (a slow store) is not doubled: the next tick looks again.
      if (this.ticking) return;
      this.ticking = this.runOnce()
        .catch((err: unknown) => this.opts.onError?.(err))
        .finally(() => (this.ticking = null));
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking;
  }

  /** One evaluation of every target; what it opened and closed. */
  async runOnce(): Promise<SloRound> {
    const now = this.clock();
    const round: SloRound = { breached: [], recovered: [] };
    const open = new Map((await this.store.slo.breaches()).map((b) => [key(b.accountId, b.metric), b]));
    const judged = new Set<string>();
    for (const row of await this.store.slo.targets()) {
      const target = targetOf(row.target);
      if (!watchesAnything(target)) continue;
      try {
        await this.evaluateGroup(row, target, now, open, judged, round);
      } catch (err) {
        // One group's failure does not hold the others up; its open breaches stay as they are until it is read.
        for (const b of open.values()) if (b.groupId === row.groupId) judged.add(key(b.accountId, b.metric));
        this.opts.onError?.(err);
      }
    }
    // Open breaches nobody judged this round: the target was cleared, or the Slave left the group.
    for (const [k, b] of open)
      if (!judged.has(k))
        await this.recover(b, null, { detail: 'no longer watched by a target', windowMinutes: 0 }, round);
    return round;
  }

  private async evaluateGroup(
    row: SloTargetRow,
    target: SloTarget,
    now: number,
    open: Map<string, SloBreachRow>,
    judged: Set<string>,
    round: SloRound,
  ): Promise<void> {
    const slaves = await slavesOf(this.store, row.userId, row.groupId);
    const from = new Date(now - target.windowMinutes * 60_000);
    const levels = await groupLevels(this.store, row.groupId, slaves, from, new Date(now));
    for (const s of levels.slaves) {
      const breaches = new Map(breachesOf(s.levels, target).map((b) => [b.metric, b]));
      for (const b of breaches.values()) {
        const k = key(s.accountId, b.metric);
        judged.add(k);
        if (open.has(k)) continue;
        const since = new Date(now);
        const opened = await this.store.slo.openBreach(
          { accountId: s.accountId, metric: b.metric, groupId: row.groupId, userId: row.userId, value: b, since },
          {
            userId: row.userId,
            accountId: s.accountId,
            type: 'slo.breached',
            payload: payload(row.groupId, b, target.windowMinutes),
          },
        );
        if (opened) round.breached.push({ accountId: s.accountId, metric: b.metric });
      }
      for (const b of open.values()) {
        if (b.accountId !== s.accountId || breaches.has(b.metric as Breach['metric'])) continue;
        const k = key(b.accountId, b.metric);
        judged.add(k);
        const current = currentValue(s.levels, b.metric);
        await this.recover(
          b,
          current,
          {
            detail: `meets the target again (${b.metric} ${current ?? 'not measured'})`,
            windowMinutes: target.windowMinutes,
          },
          round,
        );
      }
    }
  }

  private async recover(
    b: SloBreachRow,
    value: number | string | null,
    o: { detail: string; windowMinutes: number },
    round: SloRound,
  ): Promise<void> {
    const was = b.value as Partial<Breach>;
    const closed = await this.store.slo.closeBreach(b.accountId, b.metric, {
      userId: b.userId,
      accountId: b.accountId,
      type: 'slo.recovered',
      payload: {
        groupId: b.groupId,
        metric: b.metric,
        value,
        target: was.target ?? null,
        detail: o.detail,
        windowMinutes: o.windowMinutes,
        breachedAt: b.since.toISOString(),
      },
    });
    if (closed) round.recovered.push({ accountId: b.accountId, metric: b.metric });
  }
}

const payload = (groupId: string, b: Breach, windowMinutes: number) => ({
  groupId,
  metric: b.metric,
  value: b.value,
  target: b.target,
  detail: b.detail,
  windowMinutes,
});

function currentValue(l: Levels, metric: string): number | string | null {
  switch (metric) {
    case 'latency_p99':
      return l.latency.p99Ms;
    case 'latency_p50':
      return l.latency.p50Ms;
    case 'success':
      return l.success.percent;
    case 'drift':
      return l.drift.grade;
    case 'slippage':
      return l.slippage.meanPoints;
    default:
      return null;
  }
}
