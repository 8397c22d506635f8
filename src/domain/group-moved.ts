/** What a copy planned on its group's Slaves as held records only while it holds (the group's `settled` version). */
export interface GroupGuard {
  groupId: string;
  settled: string;
}

/**
 * A copy planned on its group's Slaves as held was not recorded: since they were read, a write other than a health
 * round's (a rule, an account's role, group, status or removal) touched them. Nothing was written; the copy reads
 * the group and plans again.
 */
export class GroupMovedError extends Error {
  constructor(readonly groupId: string) {
    super(`copier group ${groupId} changed since its Slaves were read; nothing was recorded`);
    this.name = 'GroupMovedError';
  }
}
