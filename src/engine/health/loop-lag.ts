/**
 * How long this process's own event loop has been held up, in total, since it started: a timer asked to fire
 * every TICK_MS is late by however long the loop was blocked or the process was not given a core. On a starved
 * machine a broker read "times out" because the answer sat behind our own stall, not because the broker was
 * slow; the health monitor subtracts this from the time a broker has been failing (src/engine/health/monitor.ts).
 *
 * `perf_hooks.monitorEventLoopDelay` gives a distribution of the same delays, but not the running total the
 * monitor needs to ask "how much of the last N seconds were we stalled"; `eventLoopUtilization` counts a
 * process that the OS did not schedule as idle. So one unref'd interval timer measures it directly.
 */
const TICK_MS = 50;
/** Lateness below this is timer jitter, not a stall. */
const JITTER_MS = 5;

let total = 0;
let last = 0;
let timer: NodeJS.Timeout | null = null;

function tick(): void {
  const now = performance.now();
  const late = now - last - TICK_MS;
  if (late > JITTER_MS) total += late;
  last = now;
}

/** Milliseconds of event-loop stall since the first call (the first call starts the measure; it never stops a process from exiting). */
export function loopStalledMs(): number {
  if (timer === null) {
    last = performance.now();
    timer = setInterval(tick, TICK_MS);
    timer.unref();
  }
  // A stall still going on (this call runs right after it) counts too, not only once the next tick comes.
  const pending = performance.now() - last - TICK_MS;
  return total + (pending > JITTER_MS ? pending : 0);
}

/**
 * A failed broker call during which our own loop was stalled at least OUR_STALL_MS, and for at least
 * OUR_STALL_SHARE of the call or OUR_STALL_ALWAYS_MS in all, says nothing about the broker: its answer may well
 * have waited behind us. (Timer jitter on a busy machine stays well under these; the absolute figure is there
 * because a call's time also includes waiting in its connection's pacer behind a burst of copies, which would
 * dilute the share.)
 */
const OUR_STALL_MS = 50;
const OUR_STALL_SHARE = 0.1;
const OUR_STALL_ALWAYS_MS = 500;

/** True when a call that took `tookMs` while our loop stalled `stalledMs` of it failed because of us, not the broker. */
export function stalledByUs(stalledMs: number, tookMs: number): boolean {
  return stalledMs >= OUR_STALL_MS && (stalledMs >= OUR_STALL_SHARE * tookMs || stalledMs >= OUR_STALL_ALWAYS_MS);
}
