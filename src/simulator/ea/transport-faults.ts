/**
 * What the simulated EA's connection does wrong on purpose, each a probability per frame (0..1): an event
 * dropped, sent twice, held back behind the next one, or sent late; the connection cut in the middle of a
 * command (before or after the trade). Seeded, so a failing run can be replayed.
 */
export interface EaTransportFaults {
  drop?: number;
  duplicate?: number;
  reorder?: number;
  delay?: number;
  /** Upper bound of a delay, ms. */
  delayMaxMs?: number;
  /** Cut the connection after executing a command, before its ack leaves. */
  disconnectAfterCommand?: number;
  /** Cut the connection when a command arrives, before executing it. */
  disconnectBeforeCommand?: number;
  seed?: number;
}

/** mulberry32: small, fast, good enough to spread faults. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
