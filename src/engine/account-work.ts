/**
 * Work running per Master account, each piece tracked until it ends, whether it succeeds or fails: what a
 * follow-up or a hand-over waits for.
 */
export class AccountWork {
  private readonly sets = new Map<string, Set<Promise<void>>>();

  /** `p` must not reject (the callers track a settled copy of their promise). */
  add(accountId: string, p: Promise<void>): void {
    let set = this.sets.get(accountId);
    if (!set) this.sets.set(accountId, (set = new Set()));
    const mine = set;
    mine.add(p);
    void p.then(() => {
      mine.delete(p);
      if (mine.size === 0 && this.sets.get(accountId) === mine) this.sets.delete(accountId);
    });
  }

  /** Resolves once what runs now under the account has ended. */
  async settled(accountId: string): Promise<void> {
    const set = this.sets.get(accountId);
    if (set && set.size > 0) await Promise.allSettled([...set]);
  }

  /** Resolves once nothing runs under the account, including what started while waiting. */
  async ended(accountId: string): Promise<void> {
    for (let set = this.sets.get(accountId); set && set.size > 0; set = this.sets.get(accountId))
      await Promise.all([...set]);
  }
}
