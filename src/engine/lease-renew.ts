import type { LeasesRepo } from '../store/repos/leases.js';
import type { LeaseBook } from './lease-book.js';
import { presenceKey } from './lease-share.js';

/**
 * One statement renews every lease held, the ones being handed over and this worker's presence, not one per
 * lease. A held lease it renewed is ours for a TTL from when the statement was sent (the database may have
 * extended it at any time after); one it did not renew was taken over, and is dropped and said lost. A lease
 * being handed over that was not renewed is simply forgotten: out of the fence already, its work stopped.
 * Throws when the store cannot be reached (then nothing changed).
 */
export async function renewHeld(
  leases: LeasesRepo,
  owner: string,
  ttl: number,
  clock: () => number,
  book: Pick<LeaseBook, 'held' | 'releasing'>,
  presence: number | null,
): Promise<{ lost: string[]; presenceRenewed: boolean }> {
  const { held, releasing } = book;
  const round = [...held.entries()].map(([key, h]) => ({ key, h }));
  const handing = [...releasing.entries()];
  const sentAt = clock();
  const renewed = new Set(
    (
      await leases.renewMany(
        owner,
        [
          ...round.map(({ key, h }) => ({ key, epoch: h.epoch })),
          ...handing.map(([key, h]) => ({ key, epoch: h.epoch })),
          ...(presence === null ? [] : [{ key: presenceKey(owner), epoch: presence }]),
        ],
        ttl,
      )
    ).map((l) => l.key),
  );
  const lost: string[] = [];
  for (const { key, h } of round) {
    if (held.get(key) !== h) continue;
    if (renewed.has(key)) h.validUntil = sentAt + ttl;
    else {
      held.delete(key);
      lost.push(key);
    }
  }
  for (const [key, h] of handing) if (!renewed.has(key) && releasing.get(key) === h) releasing.delete(key);
  return { lost, presenceRenewed: renewed.has(presenceKey(owner)) };
}
