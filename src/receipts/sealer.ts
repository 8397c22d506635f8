import type { ReceiptsRepo } from '../store/repos/receipts.js';
import type { ReceiptKey } from './receipt-key.js';

export interface SealerOptions {
  everyMs: number;
  /** A row is sealed once it has been ended this long (a late write to it lands first). */
  graceMs: number;
  /** Rows sealed per account per transaction. */
  batch?: number;
  onError?: (err: unknown) => void;
  onSealed?: (accountId: string, n: number) => void;
}

/**
 * The sealer loop: appends a receipt for every ledger row that has ended, per Slave account, in the order the rows
 * ended, and signs each account's head for the day. It reads the ledger after the copy path is done with a row and
 * writes only the receipt tables, so the copy path does not wait on it. Safe in every process at once: each append
 * is one transaction under the chain's row lock (ReceiptsRepo.seal).
 */
export class ReceiptSealer {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private stopped = false;

  constructor(
    private readonly repo: ReceiptsRepo,
    private readonly key: ReceiptKey,
    private readonly opts: SealerOptions,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.runOnce(), this.opts.everyMs);
    this.timer.unref();
  }

  /** One pass until nothing ended is left unsealed; a pass under way is joined, not started twice. Returns the count. */
  runOnce(graceMs = this.opts.graceMs): Promise<number> {
    this.running ??= this.pass(graceMs)
      .catch((err: unknown) => {
        this.opts.onError?.(err);
        return 0;
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  private async pass(graceMs: number): Promise<number> {
    const batch = this.opts.batch ?? 500;
    const signer = { keyId: this.key.current.keyId, sign: this.key.sign };
    let total = 0;
    while (!this.stopped) {
      const accounts = await this.repo.accountsToSeal(graceMs, 100);
      if (accounts.length === 0) break;
      let sealed = 0;
      for (const id of accounts) {
        const n = await this.repo.seal(id, { graceMs, limit: batch, signer });
        if (n > 0) this.opts.onSealed?.(id, n);
        sealed += n;
      }
      total += sealed;
      // Another process sealed them between the scan and the lock: nothing left for this pass.
      if (sealed === 0) break;
    }
    return total;
  }
}
