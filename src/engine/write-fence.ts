import { underWriteGate } from '../domain/write-gate.js';

/**
 * Runs one broker call of a copy under its lease: refused (`refuse` throws, nothing sent) when `mayWrite` says no
 * before the call, or when the adapter's wire asks again right before the write's bytes leave (after its token
 * refresh, pacer or rate window: waits that can outlast a lease). An adapter that turned the gate's throw into an
 * outcome still ends refused: the gate stops the one trading write of a port call, so nothing of it left.
 */
export async function fencedCall<T>(mayWrite: () => boolean, refuse: () => never, fn: () => Promise<T>): Promise<T> {
  if (!mayWrite()) refuse();
  let refused = false;
  const gate = () => {
    if (mayWrite()) return;
    refused = true;
    refuse();
  };
  let out: T;
  try {
    out = await underWriteGate(gate, fn);
  } catch (err) {
    if (refused) refuse();
    throw err;
  }
  if (refused) refuse();
  return out;
}
