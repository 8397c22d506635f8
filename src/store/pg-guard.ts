import type pg from 'pg';
import { AppError } from '../domain/errors.js';
import { isConnectionError, isStoreUnavailable, storeUnavailable } from './unavailable.js';

const RELEASE = Symbol('release');

type Callback = (err: Error | undefined, ...rest: unknown[]) => void;

/**
 * The driver's error as callers see it: a lost connection becomes `store_unavailable` (with the driver's error as
 * cause), once. An error the pool made around one already marked (its connect timeout wraps the client's) is
 * marked on top, so a caller always finds the code on the error it got.
 */
function mark(err: unknown): unknown {
  if (!err || (err instanceof AppError && err.code === 'store_unavailable')) return err;
  return isStoreUnavailable(err) || isConnectionError(err) ? storeUnavailable(err) : err;
}

function guardCallback(args: unknown[]): void {
  const last = args.length - 1;
  const cb = args[last];
  if (typeof cb === 'function')
    args[last] = (err: Error | undefined, ...rest: unknown[]) =>
      (cb as Callback)(mark(err) as Error | undefined, ...rest);
}

function guardResult<T>(r: T): T {
  if (r && typeof (r as { then?: unknown }).then === 'function')
    return (r as unknown as Promise<unknown>).catch((err: unknown) => {
      throw mark(err);
    }) as T;
  return r;
}

/**
 * The pool and client classes of node-postgres, with every error that means "the server cannot be reached now"
 * (a refused or reset connection, the server's admin_shutdown or cannot_connect_now, a class 08 state, a connect
 * that did not finish in time; see unavailable.ts) turned into the store's `store_unavailable` AppError where the
 * driver hands it out: a query (promise or callback), a connect, a pool checkout. Every other error is passed on
 * unchanged. This is the one place such errors are recognised, so they read the same to the API (503 with
 * Retry-After), to a process waiting for its database at start, and to anyone else; and a broker's socket error,
 * which never passes here, is never taken for the store's.
 */
export function guardedPg(driver: typeof pg): { Pool: typeof pg.Pool } {
  class GuardedClient extends driver.Client {
    /** While checked out through a promise `Pool.connect`: releases it (once). */
    [RELEASE]?: ((err?: Error | boolean) => void) | undefined;

    override query(...args: unknown[]): never {
      guardCallback(args);
      const r = guardResult((super.query as (...a: unknown[]) => unknown)(...args));
      if (!r || typeof (r as { then?: unknown }).then !== 'function') return r as never;
      return (r as Promise<unknown>).catch((err: unknown) => {
        // A checked-out connection that is lost goes back to the pool now, to be dropped: drizzle's transaction
        // leaks its client when BEGIN itself fails (the release is in a finally the BEGIN is not inside), and ten
        // such leaks during an outage would leave the pool empty for good. The holder's own release later is a no-op.
        if (isStoreUnavailable(err)) this[RELEASE]?.(err instanceof Error ? err : true);
        throw err;
      }) as never;
    }

    override connect(...args: unknown[]): never {
      guardCallback(args);
      return guardResult((super.connect as (...a: unknown[]) => unknown)(...args)) as never;
    }
  }

  class GuardedPool extends driver.Pool {
    constructor(config?: pg.PoolConfig) {
      super({ ...config, Client: GuardedClient as unknown as typeof driver.Client });
    }

    override connect(...args: unknown[]): never {
      if (typeof args[0] === 'function') {
        // The callback form is the pool's own (Pool.query), which releases the client itself.
        guardCallback(args);
        return (super.connect as (...a: unknown[]) => unknown)(...args) as never;
      }
      return (super.connect() as Promise<pg.PoolClient>).then(
        (client) => {
          const guarded = client as pg.PoolClient & GuardedClient;
          // The pool sets a new `release` at every checkout: this one may be called twice, the second call a no-op.
          const release = client.release.bind(client);
          let released = false;
          const once = (err?: Error | boolean) => {
            if (released) return;
            released = true;
            guarded[RELEASE] = undefined;
            release(err);
          };
          client.release = once;
          guarded[RELEASE] = once;
          return client;
        },
        (err: unknown) => {
          throw mark(err);
        },
      ) as never;
    }

    override query(...args: unknown[]): never {
      guardCallback(args);
      return guardResult((super.query as (...a: unknown[]) => unknown)(...args)) as never;
    }
  }
  return { Pool: GuardedPool };
}
