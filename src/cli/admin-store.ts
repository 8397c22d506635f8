import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runAdminOp } from '../admin/ops.js';
import type { AuthService } from '../auth/auth-service.js';
import { loadConfig, DEFAULT_DATA_DIR, type Config } from '../config/config.js';
import { AppError } from '../domain/errors.js';
import type { Store } from '../store/store.js';
import type { OperatorFile } from '../api/operator/server.js';

export interface StoreFlags {
  dataDir?: string;
  json?: boolean;
  secretKeyFile?: string;
}

export const keyFileOpt = [
  '--secret-key-file <file>',
  'the key that encrypts broker credentials, when COPYTRADE_SECRET_KEY is not set (default $COPYTRADE_SECRET_KEY_FILE or DATA_DIR/secret.key; keep it outside the data dir)',
] as const;

export const dataDirOpt = [
  '--data-dir <dir>',
  `embedded store folder, or :memory: (default ${DEFAULT_DATA_DIR}; ignored when DATABASE_URL is set)`,
] as const;

/**
 * An operator command given no store (no --data-dir, COPYTRADE_DATA_DIR or DATABASE_URL) works on the default
 * folder only when a store is already there: run from another directory, it would otherwise create a new empty
 * store in ./.copytrade and act on it (a user made there cannot sign in to the running service). `migrate`
 * creates a store on purpose and is exempt; so is a folder named explicitly.
 */
export function assertStoreChosen(o: StoreFlags, cfg: Config, env: NodeJS.ProcessEnv = process.env): void {
  if (cfg.databaseUrl || o.dataDir || env.COPYTRADE_DATA_DIR) return;
  if (cfg.dataDir === ':memory:' || existsSync(join(cfg.dataDir, 'pgdata'))) return;
  throw new AppError(
    'invalid_request',
    `no store at ${cfg.dataDir} (the default data dir, in the current directory): pass --data-dir DIR, the folder ` +
      '`copytrade serve` uses, or set DATABASE_URL. Nothing was created.',
  );
}

/** Opens the store itself (PostgreSQL: a second connection beside the server's; PGlite: only when no server holds it). */
export async function withStore<T>(
  o: StoreFlags,
  fn: (store: Store, auth: AuthService, cfg: Config) => Promise<T>,
  opts: { mayCreate?: boolean } = {},
): Promise<T> {
  const cfg = loadConfig({
    ...(o.dataDir ? { dataDir: o.dataDir } : {}),
    ...(o.secretKeyFile ? { secretKeyFile: o.secretKeyFile } : {}),
  });
  if (!opts.mayCreate) assertStoreChosen(o, cfg);
  // Loaded on use: the store (PGlite, drizzle) is the heaviest import, and the trader's commands never need it.
  const [{ Store }, { AuthService }] = await Promise.all([
    import('../store/store.js'),
    import('../auth/auth-service.js'),
  ]);
  const store = await Store.open({ dataDir: cfg.dataDir, databaseUrl: cfg.databaseUrl });
  try {
    return await fn(
      store,
      new AuthService(store, { accessTokenTtlSec: cfg.accessTokenTtlSec, apiKeyOverlapSec: cfg.apiKeyOverlapSec }),
      cfg,
    );
  } finally {
    await store.close();
  }
}

function operatorOf(dataDir: string): OperatorFile | null {
  try {
    const f = JSON.parse(readFileSync(join(dataDir, 'operator.json'), 'utf8')) as OperatorFile;
    return typeof f.url === 'string' && typeof f.token === 'string' ? f : null;
  } catch {
    return null;
  }
}

/**
 * Runs an operator command: on the store directly when it can be opened, else (the embedded store held by a
 * running service) through that service's operator listener, found in the data dir's operator.json.
 */
export async function runAdmin(o: StoreFlags, op: string, args: Record<string, unknown>): Promise<unknown> {
  try {
    return await withStore(o, (store, auth) => runAdminOp({ store, auth }, op, args), { mayCreate: op === 'migrate' });
  } catch (err) {
    if (!(err instanceof AppError && err.code === 'data_dir_in_use')) throw err;
    const cfg = loadConfig({
      ...(o.dataDir ? { dataDir: o.dataDir } : {}),
      ...(o.secretKeyFile ? { secretKeyFile: o.secretKeyFile } : {}),
    });
    const operator = operatorOf(cfg.dataDir);
    if (!operator) throw err;
    return viaOperator(operator, op, args, err);
  }
}

async function viaOperator(
  f: OperatorFile,
  op: string,
  args: Record<string, unknown>,
  lockError: AppError,
): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(`${f.url}/operator/ops/${encodeURIComponent(op)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${f.token}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(args),
    });
  } catch {
    // The server holding the store has no operator listener answering (an older version, or it is stopping).
    throw lockError;
  }
  const body = (await res.json().catch(() => null)) as { result?: unknown; code?: string; error?: string } | null;
  if (!res.ok) {
    const code = (body?.code ?? 'internal_error') as AppError['code'];
    throw new AppError(code, body?.error ?? `the running service answered ${res.status}`);
  }
  return body?.result;
}
