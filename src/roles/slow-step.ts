import type { Logger } from 'pino';

/**
 * Names the step a long piece of work is on and says so in the log every `everyMs` while it lasts. For work a
 * worker's lease keeper waits on in one queue (taking leases over, letting lost ones go): a step that never ends
 * keeps the worker from ever taking a lease again, and without this the log does not say where it stopped.
 */
export function slowStepWatch(
  logger: Logger | false | undefined,
  what: string,
  everyMs = 5_000,
): { step(name: string): void; done(): void } {
  let current = 'starting';
  const startedAt = performance.now();
  const timer = setInterval(() => {
    if (logger) logger.warn({ step: current, ms: Math.round(performance.now() - startedAt) }, `${what} is slow`);
  }, everyMs);
  timer.unref();
  return {
    step(name: string) {
      current = name;
    },
    done() {
      clearInterval(timer);
    },
  };
}
