import { getTableName, sql } from 'drizzle-orm';
import * as t from './schema.js';
import type { Db } from './db.js';

/**
 * The tables whose rows change all day (a copy's intents move through their states, links open and close, events
 * and request records are appended and pruned): vacuumed and analysed in turn, so other statements run between them.
 */
const BUSY_TABLES = [
  ...[
    t.copyIntents,
    t.trades,
    t.positionLinks,
    t.masterItems,
    t.events,
    t.eventSeqs,
    t.requestRecords,
    t.rateLimitHits,
    t.rateBuckets,
    t.idempotencyKeys,
    t.webhookAttempts,
    t.accounts,
    t.equitySnapshots,
    t.leases,
  ].map((table) => getTableName(table)),
  // The narrow child of copy_intents (migration 0013): a VACUUM of a parent does not reach its inheritance children.
  'copy_intents_recent',
  // One row per copier group, rewritten by every write of its Slaves (migration 0014).
  'group_slaves_version',
];

/**
 * The embedded store runs PostgreSQL in single-user mode: no autovacuum, no auto-analyse. Left alone its planner
 * never has statistics (it estimates one row for every table, however large the ledger grew) and dead row versions
 * are only pruned in passing, so plans and reads get worse as the service ages. This does what autovacuum does on a
 * server: an ANALYZE once the store is open, then a VACUUM (ANALYZE) of the busy tables every `everyMs`.
 * PostgreSQL servers run their own autovacuum; this is for PGlite only.
 */
export class EmbeddedMaintenance {
  private timer: NodeJS.Timeout | null = null;
  private first: Promise<void> = Promise.resolve();
  private running: Promise<void> | null = null;
  private stopped = false;
  private passes = 0;

  constructor(
    private readonly db: Db,
    private readonly opts: { everyMs: number; analyzeEvery?: number; onError?: (err: unknown) => void },
  ) {}

  /** Statistics soon where there are none (not waited for, so a start is not delayed), then the schedule. */
  start(): void {
    this.first = this.guard(async () => {
      const never = (await this.db.execute(
        sql`select relname from pg_class where relkind = 'r' and reltuples < 0 and relname in (${sql.join(
          BUSY_TABLES.map((t) => sql`${t}`),
          sql`, `,
        )})`,
      )) as unknown as { rows: Array<{ relname: string }> };
      for (const { relname } of never.rows) {
        if (this.stopped) return;
        await this.db.execute(sql.raw(`analyze ${relname}`));
      }
    });
    if (this.opts.everyMs <= 0) return;
    this.timer = setInterval(() => void this.run(), this.opts.everyMs);
    this.timer.unref();
  }

  /** One pass over the busy tables (the schedule's; also called by tests). A pass under way is not started twice. */
  run(): Promise<void> {
    this.running ??= this.first
      .then(() => this.pass())
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.all([this.first, this.running]);
  }

  private async pass(): Promise<void> {
    const analyze = this.passes++ % Math.max(1, this.opts.analyzeEvery ?? 6) === 0;
    for (const table of BUSY_TABLES) {
      if (this.stopped) return;
      await this.guard(() => this.db.execute(sql.raw(`vacuum ${analyze ? '(analyze) ' : ''}${table}`)));
    }
  }

  private async guard(fn: () => Promise<unknown>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.opts.onError?.(err);
    }
  }
}
