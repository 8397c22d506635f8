import { join, resolve } from 'node:path';
import { Command, CommanderError } from 'commander';
import { AuthService } from '../auth/auth-service.js';
import { loadConfig, DEFAULT_DATA_DIR, type Config } from '../config/config.js';
import { createLogger } from '../config/logger.js';
import { AppError } from '../domain/errors.js';
import { Store } from '../store/store.js';
import { startService } from '../main.js';
import type { ExternalSimulator } from '../demo/simulator-client.js';

interface Common { dataDir?: string; json?: boolean; secretKeyFile?: string }

/** Prints for people or, with --json, one JSON document for scripts. */
function out(json: boolean | undefined, value: unknown, human: string): void {
  process.stdout.write(json ? JSON.stringify(value) + '\n' : human + '\n');
}

async function withStore<T>(o: Common, fn: (store: Store, auth: AuthService, cfg: Config) => Promise<T>): Promise<T> {
  const cfg = loadConfig({ ...(o.dataDir ? { dataDir: o.dataDir } : {}), ...(o.secretKeyFile ? { secretKeyFile: o.secretKeyFile } : {}) });
  const store = await Store.open({ dataDir: cfg.dataDir, databaseUrl: cfg.databaseUrl });
  try {
    return await fn(store, new AuthService(store, { accessTokenTtlSec: cfg.accessTokenTtlSec, apiKeyOverlapSec: cfg.apiKeyOverlapSec }), cfg);
  } finally {
    await store.close();
  }
}

async function userId(store: Store, email: string): Promise<string> {
  const u = await store.users.byEmail(email);
  if (!u) throw new AppError('not_found', `no user with email ${email} (create one with: copytrade users create --email ${email} --password ...)`);
  return u.id;
}

const keyFileOpt = ['--secret-key-file <file>', 'the key that encrypts broker credentials, when COPYTRADE_SECRET_KEY is not set (default $COPYTRADE_SECRET_KEY_FILE or DATA_DIR/secret.key; keep it outside the data dir)'] as const;
const dataDirOpt = ['--data-dir <dir>', `embedded store folder, or :memory: (default ${DEFAULT_DATA_DIR}; ignored when DATABASE_URL is set)`] as const;

export function buildCli(): Command {
  const program = new Command('copytrade').description('Self-hostable copy-trading service').exitOverride();

  program.command('serve')
    .description('run the service (both route families, the copy engine and the embedded store)')
    // No commander defaults: HOST and PORT from the environment apply unless a flag is given (config's defaults last).
    .option('--host <host>', 'address to bind (default $HOST or 127.0.0.1)')
    .option('--port <port>', 'port of family R, and of family V unless --v1-port is given (default $PORT or 8080)')
    .option('--v1-port <port>', 'serve family V on its own port')
    .option(...dataDirOpt)
    .option(...keyFileOpt)
    .option('--demo', 'seed a demo user, a copier group and simulated accounts')
    .option('--simulator <where>', 'demo brokers: "auto" (a `copytrade simulator` process for the data dir, started unless running), '
      + 'an endpoints file written by `copytrade simulator`, or "in-process"', process.env.COPYTRADE_SIMULATOR ?? 'auto')
    .option('--json', 'print the startup summary as JSON')
    .action(async (o: Common & { host?: string; port?: string; v1Port?: string; demo?: boolean; simulator: string }) => {
      const cfg = loadConfig({ ...(o.host ? { host: o.host } : {}), ...(o.port ? { port: o.port } : {}), ...(o.v1Port ? { v1Port: o.v1Port } : {}), ...(o.dataDir ? { dataDir: o.dataDir } : {}), ...(o.secretKeyFile ? { secretKeyFile: o.secretKeyFile } : {}), demo: !!o.demo });
      const logger = createLogger(cfg.logLevel);
      let simulator: ExternalSimulator | null = null;
      if (cfg.demo && o.simulator !== 'in-process' && !(o.simulator === 'auto' && cfg.dataDir === ':memory:')) {
        // The brokers outlive the service (kill -9 included): what they confirmed is still there at the next start.
        const { ensureSimulator, connectSimulator } = await import('../demo/simulator-client.js');
        simulator = o.simulator === 'auto' ? await ensureSimulator(join(cfg.dataDir, 'simulator'), '127.0.0.1') : await connectSimulator(resolve(o.simulator));
      }
      let svc;
      try {
        svc = await startService(cfg, logger, simulator ? { simulator } : {});
      } catch (err) {
        if (simulator?.spawned) await simulator.stop();
        throw err;
      }
      const simInfo = simulator ? { pid: simulator.pid, endpointsFile: simulator.endpointsFile, spawned: simulator.spawned } : null;
      const summary = { baseUrl: svc.baseUrl, v1BaseUrl: svc.v1BaseUrl, store: svc.store.database.kind, dataDir: svc.store.database.location, demo: svc.demo, simulator: simInfo };
      if (o.json) out(true, summary, '');
      else {
        const lines = [
          '',
          `copytrade is running (store: ${summary.store} at ${summary.dataDir})`,
          `  family R  ${svc.baseUrl}/api      OpenAPI ${svc.baseUrl}/openapi.json   reference ${svc.baseUrl}/docs`,
          `  family V  ${svc.v1BaseUrl}/v1`,
        ];
        if (simInfo) lines.push(`  simulated brokers: process ${simInfo.pid}${simInfo.spawned ? '' : ' (already running)'}, endpoints in ${simInfo.endpointsFile}`);
        if (svc.demo) {
          lines.push('', 'Demo credentials (also in ' + `${cfg.dataDir}/demo-credentials.json):`,
            `  email        ${svc.demo.email}`, `  password     ${svc.demo.password}`,
            `  accessToken  ${svc.demo.accessToken}   (family R: Authorization: Bearer ...)`,
            `  apiKey       ${svc.demo.apiKey}   (family V: Authorization: Bearer ...)`,
            '', 'Try:', `  curl -s -H "Authorization: Bearer ${svc.demo.apiKey}" ${svc.v1BaseUrl}/v1/accounts`);
        }
        process.stderr.write(lines.join('\n') + '\n\n');
      }
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        logger.info({ signal }, 'shutting down');
        await svc.close();
        // After the service: its last writes and drains still reach the brokers.
        if (simulator && o.simulator === 'auto') await simulator.stop();
        process.exit(0);
      };
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => void stop(sig));
    });

  program.command('simulator')
    .description('run the simulated brokers (TradeLocker, cTrader and MetaApi front ends over one market) in their own process')
    .option('--data-dir <dir>', 'where the simulator keeps its state', join(DEFAULT_DATA_DIR, 'simulator'))
    .option('--host <host>', 'address to bind (loopback)', '127.0.0.1')
    .option('--endpoints-file <file>', 'where to write the endpoints (default DATA_DIR/endpoints.json)')
    .option('--json', 'print the endpoints as one JSON line when ready')
    .action(async (o: { dataDir: string; host: string; endpointsFile?: string; json?: boolean }) => {
      const { runSimulator } = await import('../demo/simulator-process.js');
      const sim = await runSimulator({ dataDir: o.dataDir, host: o.host, ...(o.endpointsFile ? { endpointsFile: o.endpointsFile } : {}) });
      const e = sim.endpoints;
      out(o.json, { endpointsFile: sim.endpointsFile, pid: e.pid }, [
        `copytrade simulator ${e.pid} is running (state in ${e.dataDir})`,
        `  TradeLocker  ${e.platformb.demoUrl} (demo)  ${e.platformb.liveUrl} (live)`,
        `  cTrader      ${e.platformc.demo.host}:${e.platformc.demo.port} (demo)  :${e.platformc.live.port} (live)  OAuth ${e.platformc.oauthBaseUrl}  CA ${e.platformc.caFile}`,
        `  MetaApi      ${e.platforma.baseUrl}`,
        `  endpoints and secrets in ${sim.endpointsFile}`,
      ].join('\n'));
      // Whoever started us may be gone (killed): a write to its closed pipe must not take the brokers down.
      process.stdout.on('error', () => undefined);
      let stopping = false;
      const stop = async () => {
        if (stopping) return;
        stopping = true;
        await sim.close();
        process.exit(0);
      };
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => void stop());
    });

  program.command('migrate').description('apply pending database migrations').option(...dataDirOpt).option('--json')
    .action(async (o: Common) => withStore(o, async (store) => out(o.json, { ok: true, store: store.database.kind }, `migrations applied (${store.database.kind} at ${store.database.location})`)));

  const users = program.command('users').description('manage users');
  users.command('create').requiredOption('--email <email>').requiredOption('--password <password>').option(...dataDirOpt).option('--json')
    .action(async (o: Common & { email: string; password: string }) => withStore(o, async (_s, auth) => {
      const u = await auth.createUser(o.email, o.password);
      out(o.json, u, `created user ${u.email} (${u.id})`);
    }));

  users.command('reset-password').description("set a user's password; every access token of the user is revoked and any sign-in wait lifted")
    .requiredOption('--email <email>').requiredOption('--password <password>').option(...dataDirOpt).option('--json')
    .action(async (o: Common & { email: string; password: string }) => withStore(o, async (_s, auth) => {
      const r = await auth.resetPassword(o.email, o.password);
      out(o.json, { id: r.userId, email: o.email, tokensRevoked: r.tokensRevoked }, `password of ${o.email} reset; ${r.tokensRevoked} access token(s) revoked`);
    }));

  const tokens = program.command('tokens').description('issue signed-in user access tokens (family R)');
  tokens.command('create').requiredOption('--email <email>').option(...dataDirOpt).option('--json')
    .action(async (o: Common & { email: string }) => withStore(o, async (store, auth) => {
      const t = await auth.issueToken(await userId(store, o.email));
      out(o.json, { accessToken: t.accessToken, expiresAt: t.expiresAt.toISOString() }, `access token (shown once, expires ${t.expiresAt.toISOString()}):\n${t.accessToken}`);
    }));

  const keys = program.command('keys').description('manage API keys (family V)');
  keys.command('create').requiredOption('--email <email>').option('--name <name>', 'label of the key', 'cli').option(...dataDirOpt).option('--json')
    .action(async (o: Common & { email: string; name: string }) => withStore(o, async (store, auth) => {
      const { key, apiKey } = await auth.createApiKey(await userId(store, o.email), o.name);
      out(o.json, { id: key.id, apiKey, name: key.name }, `API key ${key.id} (shown once):\n${apiKey}`);
    }));
  keys.command('list').requiredOption('--email <email>').option(...dataDirOpt).option('--json')
    .action(async (o: Common & { email: string }) => withStore(o, async (store, auth) => {
      const list = await auth.listApiKeys(await userId(store, o.email));
      out(o.json, list, list.map((k) => `${k.id}  ${k.displayPrefix}...  ${k.name}  ${k.revokedAt ? 'revoked' : k.expiresAt ? `expires ${k.expiresAt.toISOString()}` : 'active'}`).join('\n') || 'no API keys');
    }));
  keys.command('rotate').requiredOption('--email <email>').requiredOption('--id <keyId>').option('--overlap <seconds>', 'how long the old key keeps working').option(...dataDirOpt).option('--json')
    .action(async (o: Common & { email: string; id: string; overlap?: string }) => withStore(o, async (store, auth) => {
      const overlap = o.overlap === undefined ? undefined : Number(o.overlap);
      if (overlap !== undefined && (!Number.isInteger(overlap) || overlap < 0)) throw new AppError('invalid_request', '--overlap must be a non-negative whole number of seconds');
      const r = await auth.rotateApiKey(await userId(store, o.email), o.id, overlap);
      if (!r) throw new AppError('not_found', `no active API key ${o.id} for ${o.email}`);
      out(o.json, { id: r.key.id, apiKey: r.apiKey, previousId: o.id, previousExpiresAt: r.previousExpiresAt.toISOString() }, `new API key ${r.key.id} (shown once):\n${r.apiKey}\nthe old key ${o.id} works until ${r.previousExpiresAt.toISOString()}`);
    }));
  keys.command('revoke').requiredOption('--email <email>').requiredOption('--id <keyId>').option(...dataDirOpt).option('--json')
    .action(async (o: Common & { email: string; id: string }) => withStore(o, async (store, auth) => {
      if (!(await auth.revokeApiKey(await userId(store, o.email), o.id))) throw new AppError('not_found', `no active API key ${o.id} for ${o.email}`);
      out(o.json, { id: o.id, revoked: true }, `revoked ${o.id}`);
    }));
  const secrets = program.command('secrets').description('the key that encrypts broker credentials and webhook secrets at rest');
  secrets.command('rotate')
    .description('re-encrypt every sealed credential under a new key; resumable: run it again after an interruption. '
      + 'With a key file a new key is generated; with COPYTRADE_SECRET_KEY set the new key there and the old one in COPYTRADE_SECRET_KEY_PREVIOUS first. '
      + 'Stop the service first (the embedded store allows one process; other processes keep only the key they started with)')
    .option(...dataDirOpt).option(...keyFileOpt).option('--json')
    .action(async (o: Common) => withStore(o, async (store, _auth, cfg) => {
      const { loadCredentialKeys } = await import('../auth/credential-box.js');
      const { rotateKeys } = await import('../auth/key-rotation.js');
      const ring = loadCredentialKeys({ configured: cfg.secretKey, previous: cfg.secretKeyPrevious, keyFile: cfg.secretKeyFile });
      const r = await rotateKeys(store.sealed, ring);
      out(o.json, r, `${r.resealed} sealed value(s) re-encrypted, ${r.alreadyCurrent} already under key ${r.keyId}. `
        + (ring.source === 'file' ? `${ring.file} now holds only the new key.` : 'Remove COPYTRADE_SECRET_KEY_PREVIOUS from the environment now.'));
    }));
  keys.command('limit')
    .description("set a key's dedicated family V rate limits (requests per window; \"default\" = back to the configured default); the key's owner sees them in the key list and /v1/me")
    .requiredOption('--id <keyId>').option('--writes <n>', 'write requests per window').option('--reads <n>', 'read requests per window').option(...dataDirOpt).option('--json')
    .action(async (o: Common & { id: string; writes?: string; reads?: string }) => withStore(o, async (store, _auth, cfg) => {
      const parse = (v: string | undefined, name: string): number | null | undefined => {
        if (v === undefined) return undefined;
        if (v === 'default') return null;
        const n = Number(v);
        if (!Number.isInteger(n) || n < 1 || n > 1_000_000) throw new AppError('invalid_request', `--${name} must be a whole number from 1 to 1000000, or "default"`);
        return n;
      };
      const writes = parse(o.writes, 'writes');
      const reads = parse(o.reads, 'reads');
      const k = await store.credentials.setApiKeyLimits(o.id, { ...(writes !== undefined ? { writes } : {}), ...(reads !== undefined ? { reads } : {}) });
      if (!k) throw new AppError('not_found', `no API key ${o.id}`);
      const w = cfg.v1Limits.windowSec;
      const show = (n: number | null, dflt: number) => (n === null ? `${dflt} per ${w} s (default)` : `${n} per ${w} s (dedicated)`);
      out(o.json, { id: k.id, writes: k.rateLimitWrites ?? cfg.v1Limits.writes, reads: k.rateLimitReads ?? cfg.v1Limits.reads, windowSec: w, dedicated: { writes: k.rateLimitWrites !== null, reads: k.rateLimitReads !== null } },
        `API key ${k.id}: writes ${show(k.rateLimitWrites, cfg.v1Limits.writes)}, reads ${show(k.rateLimitReads, cfg.v1Limits.reads)}`);
    }));
  return program;
}

export async function run(argv: string[]): Promise<void> {
  const program = buildCli();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
    const msg = err instanceof Error ? err.message : String(err);
    const json = argv.includes('--json');
    if (json) process.stdout.write(JSON.stringify({ error: msg, code: err instanceof AppError ? err.code : 'error' }) + '\n');
    process.stderr.write(`copytrade: ${msg}\n`);
    process.exit(1);
  }
}
