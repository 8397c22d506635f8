import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The last check before a broker write leaves the process. The engine opens a gate around each broker write it
 * makes (`underWriteGate`); a platform's wire calls `passWriteGate()` as the very last step before the bytes of a
 * trading write go out (after token refreshes, pacers and rate windows), and the gate throws when the write must
 * not leave any more (a worker whose lease ran out while the write waited). Outside a gate, it passes.
 *
 * Carried by async context rather than by argument, so the port's write methods keep their shape and every
 * adapter's waits, however deep, sit between the engine's check and this one.
 */
const gates = new AsyncLocalStorage<() => void>();

export function underWriteGate<T>(gate: () => void, fn: () => Promise<T>): Promise<T> {
  return gates.run(gate, fn);
}

/** Throws (the gate's error) when the write about to leave is refused; nothing may be sent after a throw. */
export function passWriteGate(): void {
  gates.getStore()?.();
}

/** Whether the broker call running now is under a gate (the engine opens one only for a worker under leases). */
export function writeGateOpen(): boolean {
  return gates.getStore() !== undefined;
}
