import type { Logger } from 'pino';
import { IntentTransitionError } from '../domain/intent.js';
import type { Store } from '../store/store.js';
import type { OutcomeWrite } from '../store/repos/trades.js';

const MAX_BATCH = 500;
/** Batches written between two moves of recorded intents when outcomes keep coming (see loop). */
const MOVE_EVERY = 8;

/**
 * Writes settled outcomes in batches: while one transaction commits, the outcomes that arrive queue up and
 * go together in the next. A fan-out to 1000 Slaves costs a handful of commits instead of 1000 fsyncs.
 */
export class OutcomeWriter {
  private queue: Array<{ write: OutcomeWrite; resolve: () => void; reject: (err: unknown) => void }> = [];
  private running: Promise<void> | null = null;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger | false = false,
  ) {}

  push(write: OutcomeWrite): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
      if (!this.running)
        this.running = this.loop().finally(() => {
          this.running = null;
        });
    });
  }

  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** A write the store refused (an intent moved where its state machine does not allow) is logged, then fails its sender. */
  private refused(b: { write: OutcomeWrite; reject: (err: unknown) => void }, err: unknown): void {
    if (this.logger && err instanceof IntentTransitionError)
      this.logger.error(
        { err, intentId: err.intentId, from: err.from, to: err.to },
        'ledger write refused: intent state transition not allowed',
      );
    b.reject(err);
  }

  private async loop(): Promise<void> {
    // Let the outcomes of one burst gather before the first commit.
    await new Promise((r) => setImmediate(r));
    const deferMove = { moveAfter: false };
    for (;;) {
      for (let batches = 0; this.queue.length > 0 && batches < MOVE_EVERY; batches++) {
        const batch = this.queue.splice(0, MAX_BATCH);
        try {
          await this.store.trades.applyOutcomes(
            batch.map((b) => b.write),
            deferMove,
          );
          for (const b of batch) b.resolve();
        } catch {
          // One bad write must not lose the others: retry them one by one, each failing on its own.
          for (const b of batch)
            await this.store.trades
              .applyOutcomes([b.write], deferMove)
              .then(b.resolve, (err: unknown) => this.refused(b, err));
        }
      }
      // The intents of what was just settled leave copy_intents_recent for copy_intents proper: once for the burst,
      // after its writers were answered. Moved after each batch and awaited by it, this statement (its insert into
      // copy_intents' four secondary indexes: 12.6 ms at 1000 Slaves on PostgreSQL) was paid twice per 1000-Slave
      // fan-out before its copies were done, and a Master's next action waits for them to be done. Its outcome
      // is not at stake: the rows are the same rows in either table, and what a failed move leaves is swept.
      await this.store.trades.moveRecorded();
      if (this.queue.length === 0) return;
    }
  }
}
