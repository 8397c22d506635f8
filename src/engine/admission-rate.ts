/**
 * The pace at which one connection's writes are really answered while more wait behind them. The pacer's own
 * figure is what the broker allows; on a loaded machine, or behind a broker that answers slowly, fewer go
 * through, and admission control must plan with what happens rather than with what is allowed.
 */
const ALPHA = 0.2;
/** Intervals seen before the measure is trusted over the pacer's figure. */
const MIN_SAMPLES = 5;
/** A measure older than this says nothing about the connection now. */
const FORGET_MS = 30_000;

interface Meter {
  /** Smoothed ms between two answers while the connection had more writes waiting. */
  intervalMs: number;
  samples: number;
  lastAt: number;
  /** Writes still waiting when the last answer came (0 = the queue ran dry, so the next gap is idle time). */
  lastLeft: number;
}

export class ThroughputMeter {
  private readonly meters = new Map<string, Meter>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** One write of this connection answered, `left` others still handed out. */
  answered(accountId: string, left: number): void {
    const t = this.now();
    const m = this.meters.get(accountId);
    if (!m) {
      this.meters.set(accountId, { intervalMs: 0, samples: 0, lastAt: t, lastLeft: left });
      return;
    }
    if (m.lastLeft > 0 && t - m.lastAt < FORGET_MS) {
      const gap = t - m.lastAt;
      m.intervalMs = m.samples === 0 ? gap : m.intervalMs + ALPHA * (gap - m.intervalMs);
      m.samples++;
    } else if (t - m.lastAt >= FORGET_MS) {
      m.samples = 0;
    }
    m.lastAt = t;
    m.lastLeft = left;
  }

  /** Answers per second while busy, or null while too few were seen lately to say. */
  ratePerSec(accountId: string): number | null {
    const m = this.meters.get(accountId);
    if (!m || m.samples < MIN_SAMPLES || this.now() - m.lastAt >= FORGET_MS) return null;
    return 1000 / Math.max(m.intervalMs, 0.1);
  }
}
