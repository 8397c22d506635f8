import type { Command } from 'commander';
import { AppError } from '../../domain/errors.js';
import { clientFor, withApiOptions, type ApiFlags } from '../api-context.js';

export function eventCommands(program: Command): void {
  const events = program.command('events').description('the event feed');
  withApiOptions(
    events
      .command('tail')
      .description('follow the live event stream (Ctrl-C to stop); --json prints one event per line'),
  )
    .option(
      '--cursor <cursor>',
      'replay from after this cursor (one printed before, or 0 for the first event) first (default: from now)',
    )
    .option('--count <n>', 'stop after this many events')
    .action(async (o: ApiFlags & { cursor?: string; count?: string }) => {
      const cursor = o.cursor;
      const count = o.count === undefined ? Infinity : Number(o.count);
      if (cursor !== undefined && !/^(0|[A-Za-z0-9_-]{22})$/.test(cursor))
        throw new AppError('invalid_request', '--cursor must be 0 (the first event) or a cursor the service printed');
      if (!(count === Infinity || (Number.isInteger(count) && count > 0)))
        throw new AppError('invalid_request', '--count must be a positive whole number');
      const ct = clientFor(o);
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      let n = 0;
      try {
        if (!o.json)
          process.stderr.write(
            `following events${cursor !== undefined ? ` after cursor ${cursor}` : ' from now'} (Ctrl-C to stop)\n`,
          );
        for await (const e of ct.events({ ...(cursor !== undefined ? { cursor } : {}), signal: stop.signal })) {
          if (o.json) process.stdout.write(`${JSON.stringify({ cursor: e.cursor, ...e.event })}\n`);
          else
            process.stdout.write(
              `${e.cursor}  ${e.event.timestamp}  ${e.type.padEnd(24)}  ${e.event.accountId ?? '-'}  ${JSON.stringify(e.event.data)}\n`,
            );
          if (++n >= count) break;
        }
      } finally {
        stop.abort();
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });
}
