import type { Logger } from 'pino';
import { AppError } from '../domain/errors.js';
import type { Lease, LeasesRepo } from '../store/repos/leases.js';

/**
 * `copytrade serve` runs every Master of the database itself, with no lease per account: beside another `serve`
 * or beside workers on the same PostgreSQL both would copy the same Masters. It holds this one lease for as long
 * as it runs, and neither starts while the other's lease is live.
 */
export const SERVE_LEASE = 'serve:exclusive';
const TTL_MS = 15_000;

function conflict(who: string, held: Lease[]): AppError {
  const list = held.map((l) => `${l.key} (held by ${l.owner} until ${l.expiresAt.toISOString()})`).join(', ');
  return new AppError(
    'conflict',
    `${who}: ${list}. Run one \`copytrade serve\`, or \`copytrade api\` with \`copytrade worker\`s, on one database, not both. ` +
      `A process that was killed lets go within ${TTL_MS / 1000} s.`,
  );
}

/**
 * Takes the serve lease (first, so that of two processes starting together at least one sees the other) and
 * refuses when any other process holds a live lease. Keeps it renewed; `onLost` runs if a renewal fails to keep
 * it (a process paused past the TTL), so the caller stops copying. Returns the function that releases it.
 */
export async function holdServeLease(
  leases: LeasesRepo,
  owner: string,
  opts: { onLost: () => void; logger?: Logger | false; ttlMs?: number },
): Promise<() => Promise<void>> {
  const ttlMs = opts.ttlMs ?? TTL_MS;
  const mine = await leases.acquire(SERVE_LEASE, owner, ttlMs);
  if (!mine) throw conflict('another `copytrade serve` runs on this database', [(await leases.get(SERVE_LEASE))!]);
  const others = (await leases.live()).filter((l) => l.owner !== owner);
  if (others.length > 0) {
    await leases.release(SERVE_LEASE, owner, mine.epoch);
    throw conflict('`copytrade worker` processes run on this database', others);
  }
  let epoch = mine.epoch;
  let stopped = false;
  const timer = setInterval(
    () =>
      void leases
        .renew(SERVE_LEASE, owner, epoch, ttlMs)
        .then((l) => {
          if (l) epoch = l.epoch;
          else if (!stopped) {
            stopped = true;
            clearInterval(timer);
            if (opts.logger) opts.logger.fatal('the serve lease was lost (paused past its TTL?): copying stops');
            opts.onLost();
          }
        })
        .catch((err: unknown) => opts.logger && opts.logger.error({ err }, 'serve lease renewal failed')),
    Math.floor(ttlMs / 3),
  );
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await leases.release(SERVE_LEASE, owner, epoch).catch(() => undefined);
  };
}

/** A worker refuses to start while a `serve` holds the database. */
export async function refuseBesideServe(leases: LeasesRepo): Promise<void> {
  // live() compares on the database's clock, as every lease does.
  const held = (await leases.live()).filter((l) => l.key === SERVE_LEASE);
  if (held.length > 0) throw conflict('a `copytrade serve` process runs on this database', held);
}
