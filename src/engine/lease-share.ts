/** The presence row of a worker: a lease row only it ever holds, renewed with its leases, so it counts when it holds nothing. */
export const presenceKey = (owner: string) => `worker:${owner}`;
export const isPresence = (key: string) => key.startsWith('worker:');

export interface SharePlan {
  /** The keys of the group this worker holds (not counting those it is handing over). */
  mine: number;
  /** The fair share: `ceil(keys / workers)`; free keys are taken up to it. */
  hi: number;
  lo: number;
  /** How many keys to hand over now (0 within the hysteresis). */
  give: number;
}

/**
 * The share decision of one group of keys, from who holds what (`owners`, live leases) and the live workers.
 * A worker gives the keys it holds above `hi + slack`; and when it is the richest (ties: the smallest owner id,
 * so only one of them moves) while another worker holds fewer than `lo - slack`, it gives one. Within those bounds
 * nothing moves, so two workers never pass a key back and forth.
 */
export function planShare(o: {
  keys: readonly string[];
  owners: ReadonlyMap<string, string>;
  workers: readonly string[];
  me: string;
  mine: (key: string) => boolean;
  slack: number;
}): SharePlan {
  const n = o.keys.length;
  const w = Math.max(1, o.workers.length);
  const hi = Math.ceil(n / w);
  const lo = Math.floor(n / w);
  const counts = new Map<string, number>(o.workers.map((x) => [x, 0]));
  for (const k of o.keys) {
    const owner = o.owners.get(k);
    if (owner !== undefined) counts.set(owner, (counts.get(owner) ?? 0) + 1);
  }
  const mine = o.keys.filter(o.mine).length;
  counts.set(o.me, mine);
  // Once past the band, back down to the share itself (not to its edge), so the next small change moves nothing.
  let give = mine > hi + o.slack ? mine - hi : 0;
  if (give === 0 && mine > lo) {
    const needy = [...counts].some(([x, c]) => x !== o.me && c < lo - o.slack);
    const richest = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0];
    if (needy && richest === o.me) give = 1;
  }
  return { mine, hi, lo, give };
}

/** Wanted keys by group, each group's keys in the order wanted. */
export function groupKeys(wanted: readonly string[], groupOf: (key: string) => string): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const key of wanted) {
    const g = groupOf(key);
    const list = groups.get(g);
    if (list) list.push(key);
    else groups.set(g, [key]);
  }
  return groups;
}

/**
 * Keys just taken by a first round to give back at once, now that more workers are seen: what each group holds
 * above `ceil(keys / workers)`, among the fresh keys only, least wanted first (the end of the list: the order
 * given puts Masters first).
 */
export function firstRoundExcess(
  groups: ReadonlyMap<string, string[]>,
  workers: number,
  mine: (key: string) => boolean,
  fresh: ReadonlySet<string>,
): string[] {
  const back: string[] = [];
  for (const keys of groups.values()) {
    const hi = Math.ceil(keys.length / workers);
    const held = keys.filter(mine);
    const excess = held.filter((k) => fresh.has(k)).reverse();
    back.push(...excess.slice(0, Math.max(0, held.length - hi)));
  }
  return back;
}
