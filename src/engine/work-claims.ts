/**
 * Who in this process holds the ledger's unfinished work, and the settle loop's rule for taking it: stated here
 * once, instead of sets on the engine that each reader interpreted.
 *
 * - An intent is held from the moment its plan is recorded (or a settle pass picks it up) until its outcome is
 *   written: its write is between the write gate and the broker's answer, and no one else here may settle it.
 * - An order-route trade is held while its route runs (the Master's order, then the fan-out).
 * - A recorded action's trade is held until its move to accepted is written with its first outcomes.
 *
 * The settle loop takes what nobody here holds and what has been still for its grace: another process's work (a
 * crashed one's, or one whose lease moved) is the lease's question, asked by the loop's `owns` before this.
 */
export class WorkClaims {
  private readonly intents = new Set<string>();
  private readonly orderRoutes = new Set<string>();
  private readonly accepting = new Set<string>();

  /** The intents of a recorded plan about to be sent (claimed before the record, so no settle pass sees them free). */
  holdIntents(ids: Iterable<string>): void {
    for (const id of ids) this.intents.add(id);
  }

  /** Claims one intent for a settle pass; false when something here holds it already (leave it alone). */
  tryHoldIntent(id: string): boolean {
    if (this.intents.has(id)) return false;
    this.intents.add(id);
    return true;
  }

  /** Its outcome is written (or it was never sent): free for the settle loop again. */
  releaseIntent(id: string): void {
    this.intents.delete(id);
  }

  holdsIntent(id: string): boolean {
    return this.intents.has(id);
  }

  orderRouteStarted(tradeId: string): void {
    this.orderRoutes.add(tradeId);
  }

  orderRouteEnded(tradeId: string): void {
    this.orderRoutes.delete(tradeId);
  }

  orderRouteRunning(tradeId: string): boolean {
    return this.orderRoutes.has(tradeId);
  }

  /** A recorded action whose move to accepted waits for its first outcome batch. */
  acceptPending(tradeId: string): void {
    this.accepting.add(tradeId);
  }

  acceptWritten(tradeId: string): void {
    this.accepting.delete(tradeId);
  }

  /** The settle loop may settle this unfinished intent: nobody here holds it and it has been still for the grace. */
  settleMayTakeIntent(intent: { id: string; updatedAt: Date }, now: number, graceMs: number): boolean {
    return !this.intents.has(intent.id) && now - intent.updatedAt.getTime() >= graceMs;
  }

  /** The settle loop may recover this order-route trade: its route does not run here and it has been still. */
  settleMayTakeOrderRoute(trade: { id: string; updatedAt: Date }, now: number, graceMs: number): boolean {
    return !this.orderRoutes.has(trade.id) && now - trade.updatedAt.getTime() >= graceMs;
  }

  /** The settle loop may write this recorded trade's move to accepted: no fan-out here is about to write it. */
  settleMayAccept(trade: { id: string; updatedAt: Date }, now: number, graceMs: number): boolean {
    return !this.accepting.has(trade.id) && now - trade.updatedAt.getTime() >= graceMs;
  }
}
