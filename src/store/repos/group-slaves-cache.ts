import type { Account } from '../../domain/account.js';
import type { CopyRule } from '../../domain/copy-rule.js';

export interface GroupSlave {
  account: Account;
  rule: CopyRule;
}

/**
 * The Slaves of each copier group as last read on the multi-writer store (PostgreSQL), which other processes
 * write too. An entry is never trusted on its own: every read sends its digests with the statement, which
 * returns rows only when the digests of the current rows differ (see `GroupSlavesReader`), so this holds no
 * invalidation logic. Bounded by Slaves held: the least recently used groups go first.
 */
export class GroupSlavesCache<H extends { slaves: readonly unknown[] }> {
  private readonly held = new Map<string, H>();
  private size = 0;

  constructor(private readonly maxSlaves = 100_000) {}

  get(key: string): H | undefined {
    const h = this.held.get(key);
    if (h) {
      // Map order is insertion order: re-inserted, the entry is the most recently used.
      this.held.delete(key);
      this.held.set(key, h);
    }
    return h;
  }

  set(key: string, h: H): void {
    this.drop(key);
    this.held.set(key, h);
    this.size += h.slaves.length;
    for (const k of this.held.keys()) {
      if (this.size <= this.maxSlaves || k === key) break;
      this.drop(k);
    }
  }

  drop(key: string): void {
    const h = this.held.get(key);
    if (!h) return;
    this.held.delete(key);
    this.size -= h.slaves.length;
  }
}
