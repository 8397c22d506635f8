import type { Role } from './types.js';

/** One account's place in the copy graph: its group, role and broker identity. */
export interface GraphMember {
  groupId: string;
  role: Role;
  identity: string | null;
}

/**
 * Copies flow from a group's Master to its Slaves; when a Slave's broker account is also the Master of a
 * group (the same identity), copying chains on into that group. A path from a group back to itself is a
 * copy loop. Returns the groups of one such cycle through `start` (start first and last), or null.
 */
export function cycleThrough(members: GraphMember[], start: string): string[] | null {
  const mastersByIdentity = new Map<string, string[]>();
  for (const m of members) {
    if (m.role !== 'master' || !m.identity) continue;
    mastersByIdentity.set(m.identity, [...(mastersByIdentity.get(m.identity) ?? []), m.groupId]);
  }
  const next = new Map<string, Set<string>>();
  for (const m of members) {
    if (m.role !== 'slave' || !m.identity) continue;
    for (const g of mastersByIdentity.get(m.identity) ?? []) {
      if (!next.has(m.groupId)) next.set(m.groupId, new Set());
      next.get(m.groupId)!.add(g);
    }
  }
  const seen = new Set<string>();
  const walk = (g: string, path: string[]): string[] | null => {
    for (const h of next.get(g) ?? []) {
      if (h === start) return [...path, h];
      if (seen.has(h)) continue;
      seen.add(h);
      const found = walk(h, [...path, h]);
      if (found) return found;
    }
    return null;
  };
  return walk(start, [start]);
}
