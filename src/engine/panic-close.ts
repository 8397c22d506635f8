import type { Account } from '../domain/account.js';
import { AppError, notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { emptyReport, PANIC_CLOSED, type PanicJob, type PanicScope } from '../domain/panic-job.js';
import type { NewEvent } from '../store/repos/events.js';
import type { PanicJobsRepo } from '../store/repos/panic-jobs.js';
import type { Store } from '../store/store.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { Dispatcher } from './dispatcher.js';
import { PanicJobRunner, type PanicJobOptions } from './panic-jobs.js';
import { AccountFlattener, type FlattenerOptions } from './account-flattener.js';

export interface StartOptions {
  /** Cancel pending orders too (default true). */
  cancelPending?: boolean;
  /** Why: "manual" from the routes, or the risk rule that fired. Shown in the lock's statusReason. */
  reason?: string;
}

export type PanicCloseOptions = Partial<PanicJobOptions> &
  Partial<FlattenerOptions> & {
    syncWaitMs?: number;
    /**
     * An api process: a started job is handed to the worker that runs the deployment's jobs (it resumes running
     * jobs on this signal and on a schedule) instead of being run here.
     */
    handOff?: (job: PanicJob) => void;
  };

/**
 * Emergency close of an account, or of every account of a copier group, as a tracked job: the accounts are
 * locked first (no copy lands while they are being flattened), then flattened in parallel, round after round,
 * until flat or out of rounds. The job and its per-position results are readable while it runs, and a job
 * found running at start is resumed.
 */
export class PanicCloseService {
  readonly jobs: PanicJobsRepo;
  /**
   * How long the panic-close routes wait for a job to end before answering 202 with the running job. 2 s, so
   * that with the start itself and a busy event loop the answer still comes within the 3 s we promise.
   */
  readonly syncWaitMs: number;
  private readonly runner: PanicJobRunner;
  private readonly handOff: ((job: PanicJob) => void) | undefined;

  constructor(
    private readonly store: Store,
    adapters: AdapterRegistry,
    dispatcher: Dispatcher,
    opts: PanicCloseOptions = {},
  ) {
    this.syncWaitMs = opts.syncWaitMs ?? 2000;
    this.handOff = opts.handOff;
    this.jobs = store.panicJobs;
    this.runner = new PanicJobRunner(store, this.jobs, new AccountFlattener(adapters, dispatcher, opts), opts);
  }

  async start(userId: string, scope: PanicScope, targetId: string, o: StartOptions = {}): Promise<PanicJob> {
    let members: Account[];
    if (scope === 'account') {
      const account = await this.store.accounts.owned(userId, targetId);
      if (!account) throw notFound('account');
      members = [account];
    } else {
      if (!(await this.store.accounts.ownedGroup(userId, targetId))) throw notFound('copier group');
      members = await this.store.accounts.list(userId, { groupId: targetId });
    }
    // A second press of the button joins the job already running instead of racing it.
    const running = await this.jobs.runningFor(userId, scope, targetId);
    if (running) return this.runner.current(running);

    const reason = o.reason ?? 'manual';
    const id = newId('job');
    const base = { scope, targetId, jobId: id };
    const job = await this.jobs.create(
      {
        id,
        userId,
        scope,
        targetId,
        cancelPending: o.cancelPending ?? true,
        progress: { maxRounds: this.runner.maxRounds, reason, accounts: members.map((m) => emptyReport(m.id)) },
      },
      members.map((m) => ({ userId, accountId: m.id, type: 'panic_close.started', payload: { ...base, reason } })),
    );
    await this.lock(members, `panic-close ${id} (${reason}); resume to copy again`);
    // Before any close leaves: the job owns these accounts' copies now. A Master close or cancel that follows
    // (in a group's job, the Master's own flattening) is a skip on them, not a send that finds nothing.
    await this.store.trades.closeOpenLinksOfSlaves(
      members.map((m) => m.id),
      PANIC_CLOSED,
    );
    if (this.handOff) this.handOff(job);
    else void this.runner.run(job);
    return job;
  }

  /**
   * Refuses what would undo a running job: resuming one of its accounts (copies would land again) or an
   * order to it (it would be copied). 409 panic_close_running with the job id; fine again once it ended.
   */
  async assertNoRunningJob(userId: string, accountId: string, what: string): Promise<void> {
    const job = (await this.jobs.runningOf(userId)).find((j) =>
      j.progress.accounts.some((a) => a.accountId === accountId),
    );
    if (!job) return;
    throw new AppError(
      'panic_close_running',
      `panic-close job ${job.id} is running on account ${accountId}; ${what} is refused until it ends`,
      { details: { jobId: job.id } },
    );
  }

  private async lock(members: Account[], statusReason: string): Promise<void> {
    const events: NewEvent[] = [];
    for (const m of members) {
      await this.store.accounts.setStatus(m.id, 'locked', statusReason);
      events.push({
        userId: m.userId,
        accountId: m.id,
        type: 'account.status_changed',
        payload: { before: m.status, after: 'locked', reason: statusReason },
      });
    }
    if (events.length > 0) await this.store.events.emit(events);
  }

  /** A job running in this process is read from its live progress (the store has it up to saveEveryMs later). */
  async job(userId: string, id: string): Promise<PanicJob | null> {
    const job = await this.jobs.owned(userId, id);
    return job && job.state === 'running' ? this.runner.current(job) : job;
  }

  /**
   * The job once it finished, or as it stands after `ms`, whichever comes first. A job still running here is
   * answered from this process's own view, not read back from a store that may be busy with its writes.
   */
  async wait(job: PanicJob, ms: number): Promise<PanicJob> {
    const run = this.runner.done(job.id);
    if (run && ms > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        run,
        new Promise((r) => {
          timer = setTimeout(r, ms);
        }),
      ]);
      clearTimeout(timer);
    }
    if (this.runner.done(job.id)) return this.runner.current(job);
    if (!run && this.handOff) {
      // Run by another process: its end is seen in the store.
      const end = performance.now() + ms;
      for (;;) {
        const stored = (await this.jobs.owned(job.userId, job.id)) ?? job;
        if (stored.state !== 'running' || performance.now() >= end) return stored;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    return (await this.jobs.owned(job.userId, job.id)) ?? job;
  }

  /** Jobs this process is running now (the panic-jobs gauge). */
  get runningHere(): number {
    return this.runner.live;
  }

  /**
   * Picks up jobs a stopped service left running; returns how many. Also after stop(): a worker calls it when it
   * (re)takes the jobs' lease, having stopped them when it lost it.
   */
  async resumeRunning(): Promise<number> {
    this.runner.reopen();
    const jobs = await this.jobs.running();
    for (const j of jobs) void this.runner.run(j);
    return jobs.length;
  }

  /** Stops sending (closes not yet sent stay unsent); running jobs stay `running` and resume at the next start. */
  stop(): Promise<void> {
    return this.runner.stop();
  }
}
