import { SingleBar, Presets } from 'cli-progress';
import { Option, type Command } from 'commander';
import type { PanicJob } from '../../client/index.js';
import { AppError } from '../../domain/errors.js';
import { clientFor, withApiOptions, type ApiFlags } from '../api-context.js';
import { out, table } from '../output.js';

type Flags = ApiFlags & { account?: string; group?: string; keepOrders?: boolean; progress?: boolean };

/**
 * Positions closed out of all the job has to close, across its accounts: `remaining` is what is still open (a failed
 * close included), so closed + remaining is the job's size from the first read on; it grows only when a position
 * appears during the job. Before every account was read once there is no size to show.
 */
const done = (j: PanicJob) => j.totals.closed;
const seen = (j: PanicJob) => done(j) + j.totals.remaining;
const allRead = (j: PanicJob) => j.state !== 'running' || j.progress.accounts.every((a) => a.round >= 1);

export function panicCloseCommand(program: Command): void {
  withApiOptions(
    program
      .command('panic-close')
      .description('close every open trade of an account or of a copier group, and follow the job until flat'),
  )
    .addOption(new Option('--account <accountId>', 'one account').conflicts('group'))
    .addOption(new Option('--group <groupId>', 'every account of a copier group').conflicts('account'))
    .option('--keep-orders', 'leave pending orders (they are cancelled by default)')
    .option('--no-progress', 'no progress bar (it is drawn on stderr only when stderr is a terminal)')
    .action(async (o: Flags) => {
      if (!o.account && !o.group)
        throw new AppError('invalid_request', 'say what to close: --account <id> or --group <id>');
      const ct = clientFor(o);
      const body = { cancelPendingOrders: !o.keepOrders };
      // Always as a job: the same progress whether the broker is quick or slow.
      const headers = { Prefer: 'respond-async' };
      const started = o.account
        ? await ct.callWithStatus(
            ct.api.POST('/v1/accounts/{account_id}/panic-close', {
              params: { path: { account_id: o.account } },
              body,
              headers,
            }),
          )
        : await ct.callWithStatus(
            ct.api.POST('/v1/copier-groups/{group_id}/panic-close', {
              params: { path: { group_id: o.group! } },
              body,
              headers,
            }),
          );
      const jobId = 'jobId' in started.data ? started.data.jobId : (started.data as PanicJob).id;

      const progress = progressReporter(o);
      const job = await ct.followPanicJob(jobId, progress.update);
      progress.stop();
      out(
        o.json,
        job,
        () =>
          `${job.state === 'succeeded' ? 'flat' : `job ${job.state}`}: ${job.totals.closed} closed, ${job.totals.failed} failed, ${job.totals.remaining} remaining, ${job.totals.cancelled} orders cancelled (job ${job.id})\n` +
          table(job.progress.accounts, [
            ['account', (a) => a.accountId],
            ['state', (a) => a.state],
            ['closed', (a) => a.closed],
            ['failed', (a) => a.failed],
            ['remaining', (a) => a.remaining],
            ['cancelled', (a) => a.cancelled],
            ['error', (a) => a.error],
          ]),
      );
      if (job.state !== 'succeeded') {
        throw new AppError(
          'conflict',
          `panic-close job ${job.id} ended ${job.state}: ${job.totals.remaining} position(s) still open${job.error ? ` (${job.error})` : ''}; accounts stay locked`,
        );
      }
    });
}

/** A progress bar on a terminal, else a line per change on stderr (none with --json). */
function progressReporter(o: Flags): { update: (j: PanicJob) => void; stop: () => void } {
  const bar =
    o.progress !== false && process.stderr.isTTY && !o.json
      ? new SingleBar(
          {
            stream: process.stderr,
            format: 'panic-close [{bar}] {value}/{total} positions | {flat}/{accounts} accounts flat | {state}',
            hideCursor: true,
          },
          Presets.shades_classic,
        )
      : null;
  let lastLine = '';
  const update = (j: PanicJob) => {
    if (!allRead(j)) return;
    const payload = { flat: j.totals.flat, accounts: j.totals.accounts, state: j.state };
    if (bar) {
      if (!bar.isActive) bar.start(Math.max(1, seen(j)), done(j), payload);
      bar.setTotal(Math.max(1, seen(j)));
      bar.update(done(j), payload);
    } else if (!o.json) {
      // No terminal: one line per change, so a log shows the job moving.
      const line = `panic-close ${j.id}: ${done(j)}/${seen(j)} positions, ${j.totals.flat}/${j.totals.accounts} accounts flat, ${j.state}`;
      if (line !== lastLine) process.stderr.write(`${line}\n`);
      lastLine = line;
    }
  };
  return { update, stop: () => bar?.stop() };
}
