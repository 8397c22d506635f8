/** A reconcile on its way: what the view must check when the answer comes back. */
export interface ViewRead {
  session: number | null;
  changes: number;
}

/**
 * What the position and order views share: items by id, trusted only within the account session a reconcile was
 * read in, and only when no event crossed that reconcile (see PositionView for why). `target` reads one item of
 * a message: its target, null when the item no longer counts (closed, ended), undefined when unreadable.
 */
export abstract class SessionView<M, T> {
  private readonly items = new Map<string, T>();
  private trustedIn: number | null = null;
  /** Execution events applied so far; a reconcile that saw one arrive while in flight cannot be placed in order. */
  private changes = 0;

  protected abstract idOf(m: M): string;
  protected abstract target(m: M): T | null | undefined;

  /** An item held by a view trusted in `session` (the account's current one); null means "read it". */
  get(id: string, session: number | null): T | null {
    if (session === null || this.trustedIn !== session) return null;
    return this.items.get(id) ?? null;
  }

  /** Call right before a reconcile is sent, with the account's current session. */
  beginRead(session: number | null): ViewRead {
    return { session, changes: this.changes };
  }

  /** The reconcile's answer, with the account's session when it arrived. */
  endRead(read: ViewRead, all: readonly M[], session: number | null): void {
    // Sent outside the session it came back in, or crossed by an event: not placeable in the event order.
    if (read.session === null || read.session !== session || read.changes !== this.changes) return this.distrust();
    const next = new Map<string, T>();
    for (const m of all) {
      const t = this.target(m);
      if (t === undefined) return this.distrust();
      if (t) next.set(this.idOf(m), t);
    }
    this.items.clear();
    for (const [id, t] of next) this.items.set(id, t);
    this.trustedIn = session;
  }

  distrust(): void {
    this.trustedIn = null;
    this.items.clear();
  }

  /** One event seen (it may cross a reconcile in flight). */
  protected changed(): void {
    this.changes += 1;
  }

  /** An item's whole state from an event. */
  protected applyOne(m: M): void {
    const t = this.target(m);
    if (t === undefined) return this.distrust();
    if (t) this.items.set(this.idOf(m), t);
    else this.items.delete(this.idOf(m));
  }
}
