import type { Lease } from '../store/repos/leases.js';
import type { LeaseKeeperOptions } from './lease-keeper-options.js';
import { isPresence, type SharePlan } from './lease-share.js';

/** A lease this worker holds: its fencing epoch, and until when it is ours on this process's monotonic clock. */
export interface HeldLease {
  epoch: number;
  validUntil: number;
}

/** What a worker knows of its keys: held, being handed over (draining, then releasing), and recent moves. */
export interface LeaseBook {
  held: Map<string, HeldLease>;
  /** Keys being handed over: drained, then out of the fence (`releasing`) and renewed until released. */
  draining: Set<string>;
  releasing: Map<string, { epoch: number }>;
  /** When this worker released a key, and since when a key was seen free (it is not taken back at once). */
  releasedAt: Map<string, number>;
  freeSince: Map<string, number>;
}

export const newLeaseBook = (): LeaseBook => ({
  held: new Map(),
  draining: new Set(),
  releasing: new Map(),
  releasedAt: new Map(),
  freeSince: new Map(),
});

/** Who holds which wanted key and which workers are live; notes since when each key nobody holds has been free. */
export function observeLive(book: LeaseBook, me: string, wanted: string[], live: Lease[], now: number) {
  const owners = new Map<string, string>();
  const workers = new Set<string>([me]);
  for (const l of live) {
    workers.add(l.owner);
    if (!isPresence(l.key)) owners.set(l.key, l.owner);
  }
  for (const key of wanted)
    if (owners.has(key)) {
      book.freeSince.delete(key);
      // Taken by the one it was handed to (or anyone): the hand-over is over, the giver may take it again later.
      if (owners.get(key) !== me) book.releasedAt.delete(key);
    } else if (!book.freeSince.has(key)) book.freeSince.set(key, now);
  for (const key of book.freeSince.keys()) if (owners.has(key)) book.freeSince.delete(key);
  return { owners, workers, now };
}

/** The free keys of a group this worker asks for: up to its share, and any left free for a TTL. */
export function keysToAsk(
  book: LeaseBook,
  keys: string[],
  plan: SharePlan,
  owners: Map<string, string>,
  workers: number,
  now: number,
  ttl: number,
): string[] {
  let mine = plan.mine;
  const asked: string[] = [];
  for (const key of keys) {
    if (book.held.has(key) || book.releasing.has(key) || owners.has(key)) continue;
    // Free for a TTL and still nobody's (a worker present but not taking): taken whatever the share says.
    const orphan = now - (book.freeSince.get(key) ?? now) >= ttl;
    if (mine >= plan.hi && !orphan) continue;
    // Just handed over by this worker: left to the one it was given to, unless nobody took it within a TTL.
    const released = book.releasedAt.get(key);
    if (released !== undefined && now - released < ttl && !orphan && workers > 1) continue;
    asked.push(key);
    mine++;
  }
  return asked;
}

/** The keys of a group to hand over this round: none while a key of it is free (it is still moving). */
export function keysToGive(
  book: LeaseBook,
  keys: string[],
  give: number,
  owners: Map<string, string>,
  opts: Pick<LeaseKeeperOptions, 'giveOrder' | 'givePerRound'>,
  group: string,
): string[] {
  if (give <= 0 || keys.some((k) => !owners.has(k) && !book.held.has(k))) return [];
  const candidates = keys.filter((k) => book.held.has(k) && !book.draining.has(k));
  const order = opts.giveOrder ? opts.giveOrder(candidates) : [...candidates].reverse();
  const perRound = opts.givePerRound ?? 2;
  const limit = typeof perRound === 'function' ? perRound(group) : perRound;
  return order.slice(0, Math.min(give, limit));
}
