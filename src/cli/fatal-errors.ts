/** What the process-wide handlers need: a logger's `fatal`, the exit and the hook (replaceable in tests). */
export interface FatalDeps {
  log: (fields: object, msg: string) => void;
  exit?: (code: number) => void;
  on?: (event: 'uncaughtException' | 'unhandledRejection', fn: (err: unknown) => void) => void;
}

/**
 * An error nothing handled ends the process, as Node's default does (the state it leaves is unknown, and the
 * supervisor restarts the process; the settle loop finishes what it had on the wire). What changes is where it is
 * said: Node prints it on stderr only, and a deployment that collects the JSON log lines of stdout never sees why
 * a worker died. So it is logged at fatal first, then the process exits with 1.
 */
export function exitOnFatalErrors(deps: FatalDeps): void {
  const exit = deps.exit ?? ((code: number) => process.exit(code));
  const on = deps.on ?? ((event, fn) => process.on(event, fn));
  let ending = false;
  const fatal = (kind: string) => (err: unknown) => {
    // A second error while logging the first must not loop; the process is ending anyway.
    if (ending) return;
    ending = true;
    try {
      deps.log({ err, kind }, 'unhandled error: the process exits');
    } finally {
      exit(1);
    }
  };
  on('uncaughtException', fatal('uncaughtException'));
  on('unhandledRejection', fatal('unhandledRejection'));
}
