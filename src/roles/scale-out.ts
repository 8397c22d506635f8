import type { Config } from '../config/config.js';
import { AppError } from '../domain/errors.js';

/**
 * `api` and `worker` processes share one store and one bus: the embedded store is one process's alone, and
 * without NATS the processes could not hand order requests to each other. Refused before anything is opened.
 */
export function requireScaleOut(cfg: Config, role: 'api' | 'worker'): void {
  const missing = [cfg.databaseUrl ? null : 'DATABASE_URL', cfg.natsUrl ? null : 'NATS_URL'].filter(Boolean);
  if (missing.length > 0)
    throw new AppError(
      'invalid_request',
      `copytrade ${role} runs beside other api and worker processes on PostgreSQL and NATS: set ${missing.join(' and ')} ` +
        '(the embedded store is single-process: use `copytrade serve` for one process)',
    );
}
