import { CommanderError } from 'commander';
import { CopytradeApiError } from '../client/index.js';
import { AppError } from '../domain/errors.js';

/** Exit statuses: 1 the service or the store refused (the code says why), 2 bad usage, 3 the service could not be reached. */
export const EXIT = { failed: 1, usage: 2, unreachable: 3 } as const;

export interface Failure {
  code: string;
  message: string;
  status?: number;
  requestId?: string | null;
  exit: number;
}

export function describeFailure(err: unknown): Failure {
  if (err instanceof CopytradeApiError)
    return { code: err.code, message: err.message, status: err.status, requestId: err.requestId, exit: EXIT.failed };
  if (err instanceof AppError) return { code: err.code, message: err.message, exit: EXIT.failed };
  if (err instanceof CommanderError)
    return { code: 'usage', message: err.message, exit: err.exitCode === 0 ? 0 : EXIT.usage };
  // fetch() wraps the socket error: ECONNREFUSED and friends are in its cause.
  const cause = (err as { cause?: { code?: string; message?: string } } | null)?.cause;
  if (err instanceof TypeError && (cause?.code || err.message === 'fetch failed')) {
    return {
      code: 'unreachable',
      message: `cannot reach the service (${cause?.code ?? cause?.message ?? err.message}): is it running, and is --url / COPYTRADE_URL right?`,
      exit: EXIT.unreachable,
    };
  }
  return { code: 'error', message: err instanceof Error ? err.message : String(err), exit: EXIT.failed };
}

/** `copytrade: <code>: <message>` on stderr (and with --json the same as one JSON line on stdout). */
export function reportFailure(err: unknown, json: boolean): number {
  const f = describeFailure(err);
  if (f.exit === 0) return 0;
  if (json)
    process.stdout.write(
      `${JSON.stringify({
        error: f.message,
        code: f.code,
        ...(f.status ? { status: f.status } : {}),
        ...(f.requestId ? { requestId: f.requestId } : {}),
      })}\n`,
    );
  if (f.code !== 'usage')
    process.stderr.write(`copytrade: ${f.code}: ${f.message}${f.requestId ? ` (request ${f.requestId})` : ''}\n`);
  return f.exit;
}
