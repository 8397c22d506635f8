import type { LeasesRepo } from '../store/repos/leases.js';
import type { LeaseBook } from './lease-book.js';

export interface HandoverDeps {
  leases: LeasesRepo;
  owner: string;
  clock: () => number;
  drain: (keys: string[]) => Promise<void>;
  quiesce?: (keys: string[]) => Promise<void>;
  onReleased?: (keys: string[]) => void;
  log: (msg: string, err: unknown) => void;
}

/**
 * Hands `keys` over: the role drains their work; then they leave the fence (later writes are refused before they
 * leave) while still renewed, until no write under them is on the wire; then they are released at the store.
 */
export async function handOver(keys: string[], book: LeaseBook, deps: HandoverDeps): Promise<void> {
  for (const k of keys) book.draining.add(k);
  try {
    // A drain that failed part-way is not a reason to keep the keys: the fence and `quiesce` below are what make
    // the release safe (nothing can still land once they are done).
    await deps.drain(keys).catch((err: unknown) => deps.log('draining leases before handing over failed', err));
    const out: string[] = [];
    for (const k of keys) {
      const h = book.held.get(k);
      if (!h) continue; // lost meanwhile: its loss was handled as any other
      book.held.delete(k);
      book.releasing.set(k, { epoch: h.epoch });
      out.push(k);
    }
    if (out.length === 0) return;
    await deps.quiesce?.(out);
    const released: string[] = [];
    for (const k of out) {
      const h = book.releasing.get(k);
      if (!h) continue;
      book.releasing.delete(k);
      if (await deps.leases.release(k, deps.owner, h.epoch).catch(() => false)) {
        book.releasedAt.set(k, deps.clock());
        book.freeSince.set(k, deps.clock());
        released.push(k);
      }
    }
    if (released.length > 0) deps.onReleased?.(released);
  } finally {
    for (const k of keys) book.draining.delete(k);
  }
}
