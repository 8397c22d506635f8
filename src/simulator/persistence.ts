import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { SimBroker } from './broker.js';

/**
 * Keeps the simulated broker's state in a JSON file beside the store, so a demo restarted on the same data
 * dir finds its positions where it left them. Writes are debounced and atomic (write + rename).
 */
export class SimPersistence {
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly file: string) {}

  load(): unknown {
    if (!existsSync(this.file)) return undefined;
    try {
      return JSON.parse(readFileSync(this.file, 'utf8'));
    } catch (err) {
      throw new Error(`simulator state ${this.file} is unreadable (${(err as Error).message}); move it away to start the simulator afresh`);
    }
  }

  attach(broker: SimBroker, debounceMs = 500): void {
    this.unsubscribe = broker.onEvent(() => {
      if (this.timer) return;
      this.timer = setTimeout(() => {
        this.timer = null;
        this.save(broker);
      }, debounceMs);
    });
  }

  save(broker: SimBroker): void {
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify(broker.snapshot()));
    renameSync(tmp, this.file);
  }

  detach(broker: SimBroker): void {
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.save(broker);
  }
}
