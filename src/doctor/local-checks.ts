import { accessSync, constants, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, isAbsolute } from 'node:path';
import type { Config } from '../config/config.js';
import { readKeyFile } from '../auth/credential-box.js';
import { type CheckResult, fail, ok, warn } from './check.js';
import { probeSocket } from './probes.js';

const KEY_FIX = 'set COPYTRADE_SECRET_KEY_FILE (or --secret-key-file) to a file of mode 0600, or COPYTRADE_SECRET_KEY';

/** The key that seals broker credentials: present, readable, a valid key, and readable by nobody else. */
export function keyCheck(cfg: Config): CheckResult {
  const check = 'secret-key';
  if (cfg.secretKey) {
    const key = Buffer.from(cfg.secretKey.trim(), 'base64');
    return key.length === 32
      ? ok(check, 'the credential key comes from COPYTRADE_SECRET_KEY')
      : fail(check, 'COPYTRADE_SECRET_KEY is not 32 bytes, base64-encoded', 'set it to `openssl rand -base64 32`');
  }
  const file = cfg.secretKeyFile;
  if (!file) return ok(check, 'in-memory store: a throwaway key, nothing outlives the process');
  if (!existsSync(file) && cfg.demo) return ok(check, `${file} is created (mode 0600) at the demo's first start`);
  if (!existsSync(file))
    return warn(
      check,
      `${file} does not exist: the service creates one (mode 0600) at its first start; ` +
        'credentials already stored under another key could not be opened',
      KEY_FIX,
    );
  const mode = statSync(file).mode & 0o777;
  try {
    accessSync(file, constants.R_OK);
    if (readKeyFile(file).length === 0) return fail(check, `${file} holds no key`, KEY_FIX);
  } catch (err) {
    return fail(check, `${file} cannot be read: ${(err as Error).message}`, KEY_FIX);
  }
  if ((mode & 0o077) !== 0)
    return fail(
      check,
      `${file} has mode 0${mode.toString(8)}: others on this machine can read the key`,
      `chmod 600 ${file}`,
    );
  const inside = (() => {
    if (cfg.databaseUrl || cfg.demo || cfg.dataDir === ':memory:') return false;
    const rel = relative(cfg.dataDir, file);
    return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
  })();
  if (inside)
    return warn(check, `${file} sits in the data dir beside what it encrypts: a copy of the dir holds both`, KEY_FIX);
  return ok(check, `${file} (mode 0${mode.toString(8)}) holds a valid key`);
}

/** Embedded store: the data dir is writable (or can be created). */
export function dataDirCheck(cfg: Config): CheckResult {
  const check = 'store';
  const fix = 'set COPYTRADE_DATA_DIR (or --data-dir) to a directory the service user can write, or DATABASE_URL';
  if (cfg.dataDir === ':memory:') return warn(check, 'in-memory store: nothing is kept across a restart', fix);
  let dir = cfg.dataDir;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  const probe = join(dir, `.doctor-${process.pid}`);
  try {
    writeFileSync(probe, '');
    rmSync(probe);
  } catch (err) {
    return fail(check, `embedded store at ${cfg.dataDir}: ${dir} is not writable (${(err as Error).message})`, fix);
  }
  return ok(
    check,
    dir === cfg.dataDir
      ? `embedded store at ${cfg.dataDir} is writable (the service migrates it when it opens it)`
      : `embedded store at ${cfg.dataDir} will be created (${dir} is writable)`,
  );
}

/** PostgreSQL: reachable within the timeout, and every migration of this build applied. */
export async function postgresCheck(cfg: Config, migrationsFolder: string, timeoutMs: number): Promise<CheckResult> {
  const check = 'store';
  const { default: pg } = await import('pg');
  const client = new pg.Client({
    connectionString: cfg.databaseUrl,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
  });
  client.on('error', () => undefined);
  const where = (() => {
    try {
      const u = new URL(cfg.databaseUrl!);
      return `${u.hostname}:${u.port || 5432}${u.pathname}`;
    } catch {
      return 'DATABASE_URL';
    }
  })();
  try {
    await client.connect();
    const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as {
      entries: unknown[];
    };
    const applied = await client
      .query<{ n: string }>('select count(*)::text as n from drizzle.__drizzle_migrations')
      .then((r) => Number(r.rows[0]?.n ?? 0))
      .catch(() => 0);
    const want = journal.entries.length;
    if (applied < want)
      return fail(
        check,
        `PostgreSQL at ${where} has ${applied} of ${want} migrations applied`,
        'run `copytrade migrate` (or start the service: it migrates on start)',
      );
    return ok(check, `PostgreSQL at ${where} answers, all ${want} migrations applied`);
  } catch (err) {
    const e = err as { code?: string; message?: string };
    return fail(
      check,
      `PostgreSQL at ${where} unreachable: ${e.code ?? ''} ${e.message ?? String(err)}`.trim(),
      'check DATABASE_URL and that the database server is up and reachable',
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** NATS when configured: each server accepts a connection and greets with its INFO line. */
export async function natsCheck(cfg: Config, timeoutMs: number): Promise<CheckResult[]> {
  if (!cfg.natsUrl) return [ok('nats', 'not configured: signals stay inside one process (NATS_URL unset)')];
  const servers = cfg.natsUrl.split(',').map((s) => s.trim());
  return Promise.all(
    servers.map(async (s) => {
      let u: URL;
      try {
        u = new URL(s.includes('://') ? s : `nats://${s}`);
      } catch {
        return fail('nats', `${JSON.stringify(s)} is not a NATS URL`, 'set NATS_URL to nats://host:4222');
      }
      const r = await probeSocket(u.hostname, Number(u.port || 4222), { tls: false, firstLine: true, timeoutMs });
      if (!r.ok) return fail('nats', `${u.host}: ${r.reason}`, 'check NATS_URL and that the NATS server is up');
      if (!r.firstLine?.startsWith('INFO'))
        return fail('nats', `${u.host} answered, but not as a NATS server`, 'check NATS_URL');
      return ok('nats', `${u.host} answered as a NATS server in ${r.ms} ms`);
    }),
  );
}
