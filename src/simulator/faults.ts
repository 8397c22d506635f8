import type { ActiveFault, FaultInjector, FaultOp, FaultSpec } from './contract.js';

/** Faults are consumed first-in first-out per matching op and account, so a test can script a sequence. */
export class SimFaultInjector implements FaultInjector {
  private faults: ActiveFault[] = [];
  private counter = 0;

  inject(spec: FaultSpec): string {
    const times = spec.times ?? 1;
    if (!Number.isInteger(times) || times < 1)
      throw new RangeError(`fault times must be a positive integer, got ${times}`);
    if (spec.partialRatio !== undefined && !(spec.partialRatio > 0 && spec.partialRatio <= 1)) {
      throw new RangeError(`partialRatio must be in (0, 1], got ${spec.partialRatio}`);
    }
    if (spec.kind === 'cancel_after_timeout' && spec.op !== 'placeOrder') {
      throw new RangeError(`cancel_after_timeout applies to placeOrder only, got op ${spec.op}`);
    }
    const id = `flt_${++this.counter}`;
    this.faults.push({ ...spec, id, remaining: times });
    return id;
  }

  take(op: Exclude<FaultOp, '*'>, accountId: string): ActiveFault | null {
    const f = this.faults.find(
      (x) => (x.op === op || x.op === '*') && (x.accountId === undefined || x.accountId === accountId),
    );
    if (!f) return null;
    f.remaining -= 1;
    if (f.remaining <= 0) this.remove(f.id);
    return { ...f };
  }

  list(): ActiveFault[] {
    return this.faults.map((f) => ({ ...f }));
  }

  remove(id: string): void {
    this.faults = this.faults.filter((f) => f.id !== id);
  }

  clear(): void {
    this.faults = [];
  }
}
