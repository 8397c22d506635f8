import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString, LogFn, Logger } from 'pino';

const LOG_METHODS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Fastify makes a pino child (with the request id bound) for every request before any route runs; most requests
 * never write a line through it (the access line is written by OneAccessLine without it), and making it was 3 % of
 * the service's busy CPU on a cheap read (docs/performance.md, issue 12). This stands in for that child and makes
 * the real one the first time something uses it, so a route's error line still carries its request id. Methods
 * live on the prototype: an object per request with seven closures would cost what it saves.
 */
export class LazyChildLogger {
  private made: Logger | null = null;
  declare fatal: LogFn;
  declare error: LogFn;
  declare warn: LogFn;
  declare info: LogFn;
  declare debug: LogFn;
  declare trace: LogFn;
  declare silent: LogFn;

  constructor(
    private readonly parent: Logger,
    private readonly bound: Bindings,
    private readonly opts: ChildLoggerOptions,
  ) {}

  /** The pino child Fastify would have made. */
  get real(): Logger {
    this.made ??= this.parent.child(this.bound, this.opts);
    return this.made;
  }

  get level(): LevelWithSilentOrString {
    return this.made ? this.made.level : (this.opts.level ?? this.parent.level);
  }

  set level(l: LevelWithSilentOrString) {
    this.real.level = l;
  }

  isLevelEnabled(level: string): boolean {
    return this.real.isLevelEnabled(level);
  }

  bindings(): Bindings {
    return this.real.bindings();
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.real.child(bindings, options);
  }
}

for (const m of LOG_METHODS) {
  Object.defineProperty(LazyChildLogger.prototype, m, {
    value: function (this: LazyChildLogger, ...args: unknown[]) {
      return (this.real[m] as (...a: unknown[]) => void)(...args);
    },
  });
}

/** Fastify's `childLoggerFactory`: the request's logger, made when first used. */
export function lazyChildLoggers(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  opts: ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyChildLogger(logger as Logger, bindings, opts) as unknown as FastifyBaseLogger;
}
