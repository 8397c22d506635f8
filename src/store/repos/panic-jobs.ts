import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../db.js';
import { panicJobs } from '../schema.js';
import type { EventsRepo, NewEvent } from './events.js';
import type { PanicJob, PanicJobState, PanicProgress, PanicScope } from '../../domain/panic-job.js';
import type { Fence } from '../../domain/lease.js';
import { checkFence } from './leases.js';

type Row = typeof panicJobs.$inferSelect;

const toJob = (r: Row): PanicJob => ({
  id: r.id,
  userId: r.userId,
  scope: r.scope as PanicScope,
  targetId: r.targetId,
  state: r.state as PanicJobState,
  cancelPending: r.cancelPending,
  progress: r.progress as PanicProgress,
  error: r.error,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
  finishedAt: r.finishedAt,
});

export interface JobPatch {
  state?: PanicJobState;
  progress?: PanicProgress;
  error?: string | null;
  finishedAt?: Date | null;
}

/**
 * Panic-close jobs. Every state change is written in one transaction with the events it causes
 * (panic_close.started / progress / finished), so the outbox never reports a change that did not happen.
 */
export class PanicJobsRepo {
  /**
   * Set by a worker process: a running job's saves are made only under the lease its jobs run under (`key`), at the
   * epoch this process holds, checked in the save's own transaction. A holder paused past its lease that wakes
   * cannot save its stale view of a job over its successor's. Null (one process, the api role): unfenced.
   */
  fence: { fence: Fence; key: string } | null = null;

  constructor(
    private readonly db: Db,
    private readonly events: EventsRepo,
  ) {}

  async create(
    job: Pick<PanicJob, 'id' | 'userId' | 'scope' | 'targetId' | 'cancelPending' | 'progress'>,
    evs: NewEvent[],
  ): Promise<PanicJob> {
    const row = await this.db.transaction(async (tx) => {
      const [r] = await tx
        .insert(panicJobs)
        .values({ ...job, state: 'running' })
        .returning();
      await this.events.append(tx, evs);
      return r!;
    });
    this.events.notify(evs.map((e) => e.userId));
    return toJob(row);
  }

  async update(id: string, patch: JobPatch, evs: NewEvent[] = []): Promise<void> {
    await this.db.transaction(async (tx) => {
      if (this.fence) await checkFence(tx, this.fence.fence, [this.fence.key]);
      // Only while running: a process that lost the job's lease and saves late cannot rewrite a job its successor
      // already finished.
      await tx
        .update(panicJobs)
        .set({ ...patch, updatedAt: new Date() })
        .where(and(eq(panicJobs.id, id), eq(panicJobs.state, 'running')));
      if (evs.length > 0) await this.events.append(tx, evs);
    });
    if (evs.length > 0) this.events.notify(evs.map((e) => e.userId));
  }

  /** Whose job it is and what it covers, whoever asks (a user with a role on the target may read it). */
  async target(id: string): Promise<{ userId: string; scope: string; targetId: string } | null> {
    const [r] = await this.db
      .select({ userId: panicJobs.userId, scope: panicJobs.scope, targetId: panicJobs.targetId })
      .from(panicJobs)
      .where(eq(panicJobs.id, id))
      .limit(1);
    return r ?? null;
  }

  async owned(userId: string, id: string): Promise<PanicJob | null> {
    const [r] = await this.db
      .select()
      .from(panicJobs)
      .where(and(eq(panicJobs.id, id), eq(panicJobs.userId, userId)))
      .limit(1);
    return r ? toJob(r) : null;
  }

  async running(): Promise<PanicJob[]> {
    return (
      await this.db.select().from(panicJobs).where(eq(panicJobs.state, 'running')).orderBy(asc(panicJobs.createdAt))
    ).map(toJob);
  }

  /** A user's running jobs (few: one per target at most), to find the ones covering an account. */
  async runningOf(userId: string): Promise<PanicJob[]> {
    return (
      await this.db
        .select()
        .from(panicJobs)
        .where(and(eq(panicJobs.userId, userId), eq(panicJobs.state, 'running')))
    ).map(toJob);
  }

  async runningFor(userId: string, scope: PanicScope, targetId: string): Promise<PanicJob | null> {
    const [r] = await this.db
      .select()
      .from(panicJobs)
      .where(
        and(
          eq(panicJobs.userId, userId),
          eq(panicJobs.scope, scope),
          eq(panicJobs.targetId, targetId),
          eq(panicJobs.state, 'running'),
        ),
      )
      .limit(1);
    return r ? toJob(r) : null;
  }
}
