import type { Command } from 'commander';
import { loadConfig } from '../../config/config.js';
import { dataDirOpt, keyFileOpt, runAdmin, withStore, type StoreFlags } from '../admin-store.js';
import { out, table } from '../output.js';

/**
 * The operator's commands (migrate, users, tokens, keys). They work with the server stopped, beside it on
 * PostgreSQL, and through a running server's operator listener on the embedded store (see admin-store.ts).
 */
export function adminCommands(program: Command): void {
  migrateCommand(program);
  userCommands(program);
  tokenCommands(program);
  bridgeTokenCommands(program);
  keyLimitCommand(keyCommands(program));
  secretCommands(program);
}

function migrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations')
    .option(...dataDirOpt)
    .option('--json')
    .action(async (o: StoreFlags) => {
      const r = (await runAdmin(o, 'migrate', {})) as { store: string; location: string };
      out(o.json, { ok: true, store: r.store }, `migrations applied (${r.store} at ${r.location})`);
    });
}

function userCommands(program: Command): void {
  const users = program.command('users').description('manage users');
  users
    .command('create')
    .requiredOption('--email <email>')
    .requiredOption('--password <password>')
    .option(...dataDirOpt)
    .option('--json')
    .action(async (o: StoreFlags & { email: string; password: string }) => {
      const u = (await runAdmin(o, 'users.create', { email: o.email, password: o.password })) as {
        id: string;
        email: string;
      };
      out(o.json, u, `created user ${u.email} (${u.id})`);
    });

  users
    .command('reset-password')
    .description(
      "set a user's password; every access token of the user is revoked and any sign-in wait lifted; " +
        'with --revoke-api-keys every API key too (do that when the old password may have leaked)',
    )
    .requiredOption('--email <email>')
    .requiredOption('--password <password>')
    .option('--revoke-api-keys', 'also revoke every API key of the user')
    .option(...dataDirOpt)
    .option('--json')
    .action(async (o: StoreFlags & { email: string; password: string; revokeApiKeys?: boolean }) => {
      const r = (await runAdmin(o, 'users.reset-password', {
        email: o.email,
        password: o.password,
        revokeApiKeys: o.revokeApiKeys === true,
      })) as { tokensRevoked: number; apiKeysRevoked: number };
      out(
        o.json,
        r,
        `password of ${o.email} reset; ${r.tokensRevoked} access token(s) revoked; ` +
          (o.revokeApiKeys
            ? `${r.apiKeysRevoked} API key(s) revoked`
            : 'API keys kept (--revoke-api-keys revokes them)'),
      );
    });
}

function tokenCommands(program: Command): void {
  const tokens = program.command('tokens').description('issue signed-in user access tokens (family R)');
  tokens
    .command('create')
    .requiredOption('--email <email>')
    .option(...dataDirOpt)
    .option('--json')
    .action(async (o: StoreFlags & { email: string }) => {
      const t = (await runAdmin(o, 'tokens.create', { email: o.email })) as { accessToken: string; expiresAt: string };
      out(o.json, t, `access token (shown once, expires ${t.expiresAt}):\n${t.accessToken}`);
    });
}

/** Returns the `keys` command, which `keyLimitCommand` extends. */
function keyCommands(program: Command): Command {
  const keys = program.command('keys').description('manage API keys (family V)');
  keys
    .command('create')
    .requiredOption('--email <email>')
    .option('--name <name>', 'label of the key', 'cli')
    .option(...dataDirOpt)
    .option('--json')
    .action(async (o: StoreFlags & { email: string; name: string }) => {
      const k = (await runAdmin(o, 'keys.create', { email: o.email, name: o.name })) as {
        id: string;
        apiKey: string;
        name: string;
      };
      out(o.json, k, `API key ${k.id} (shown once):\n${k.apiKey}`);
    });
  keys
    .command('list')
    .requiredOption('--email <email>')
    .option(...dataDirOpt)
    .option('--json')
    .action(async (o: StoreFlags & { email: string }) => {
      const list = (await runAdmin(o, 'keys.list', { email: o.email })) as Array<{
        id: string;
        displayPrefix: string;
        name: string;
        revokedAt: string | null;
        expiresAt: string | null;
      }>;
      out(o.json, list, () =>
        table(
          list,
          [
            ['id', (k) => k.id],
            ['prefix', (k) => `${k.displayPrefix}...`],
            ['name', (k) => k.name],
            ['state', (k) => (k.revokedAt ? 'revoked' : k.expiresAt ? `expires ${k.expiresAt}` : 'active')],
          ],
          'no API keys',
        ),
      );
    });
  keys
    .command('rotate')
    .requiredOption('--email <email>')
    .requiredOption('--id <keyId>')
    .option('--overlap <seconds>', 'how long the old key keeps working')
    .option(...dataDirOpt)
    .option('--json')
    .action(async (o: StoreFlags & { email: string; id: string; overlap?: string }) => {
      const r = (await runAdmin(o, 'keys.rotate', { email: o.email, id: o.id, overlap: o.overlap })) as {
        id: string;
        apiKey: string;
        previousId: string;
        previousExpiresAt: string;
      };
      out(
        o.json,
        r,
        `new API key ${r.id} (shown once):\n${r.apiKey}\nthe old key ${o.id} works until ${r.previousExpiresAt}`,
      );
    });
  keys
    .command('revoke')
    .requiredOption('--email <email>')
    .requiredOption('--id <keyId>')
    .option(...dataDirOpt)
    .option('--json')
    .action(async (o: StoreFlags & { email: string; id: string }) => {
      const r = await runAdmin(o, 'keys.revoke', { email: o.email, id: o.id });
      out(o.json, r, `revoked ${o.id}`);
    });
  return keys;
}

function keyLimitCommand(keys: Command): void {
  keys
    .command('limit')
    .description(
      'set a key\'s dedicated family V rate limits (requests per window; "default" = back to the configured default); the key\'s owner sees them in the key list and /v1/me',
    )
    .requiredOption('--id <keyId>')
    .option('--writes <n>', 'write requests per window')
    .option('--reads <n>', 'read requests per window')
    .option(...dataDirOpt)
    .option('--json')
    .action(async (o: StoreFlags & { id: string; writes?: string; reads?: string }) => {
      const k = (await runAdmin(o, 'keys.limit', { id: o.id, writes: o.writes, reads: o.reads })) as {
        id: string;
        writes: number | null;
        reads: number | null;
      };
      const d = loadConfig(o.dataDir ? { dataDir: o.dataDir } : {}).v1Limits;
      const show = (n: number | null, dflt: number) =>
        n === null ? `${dflt} per ${d.windowSec} s (default)` : `${n} per ${d.windowSec} s (dedicated)`;
      out(
        o.json,
        {
          id: k.id,
          writes: k.writes ?? d.writes,
          reads: k.reads ?? d.reads,
          windowSec: d.windowSec,
          dedicated: { writes: k.writes !== null, reads: k.reads !== null },
        },
        `API key ${k.id}: writes ${show(k.writes, d.writes)}, reads ${show(k.reads, d.reads)}`,
      );
    });
}

function secretCommands(program: Command): void {
  const secrets = program
    .command('secrets')
    .description('the key that encrypts broker credentials and webhook secrets at rest');
  secrets
    .command('rotate')
    .description(
      're-encrypt every sealed credential under a new key; resumable: run it again after an interruption. ' +
        'With a key file a new key is generated; with COPYTRADE_SECRET_KEY set the new key there and the old one in COPYTRADE_SECRET_KEY_PREVIOUS first. ' +
        'Stop the service first (the embedded store allows one process; other processes keep only the key they started with)',
    )
    .option(...dataDirOpt)
    .option(...keyFileOpt)
    .option('--json')
    .action(async (o: StoreFlags) =>
      withStore(o, async (store, _auth, cfg) => {
        const { loadCredentialKeys } = await import('../../auth/credential-box.js');
        const { rotateKeys } = await import('../../auth/key-rotation.js');
        const ring = loadCredentialKeys({
          configured: cfg.secretKey,
          previous: cfg.secretKeyPrevious,
          keyFile: cfg.secretKeyFile,
        });
        const r = await rotateKeys(store.sealed, ring);
        out(
          o.json,
          r,
          `${r.resealed} sealed value(s) re-encrypted, ${r.alreadyCurrent} already under key ${r.keyId}. ` +
            (ring.source === 'file'
              ? `${ring.file} now holds only the new key.`
              : 'Remove COPYTRADE_SECRET_KEY_PREVIOUS from the environment now.'),
        );
      }),
    );
}

function bridgeTokenCommands(program: Command): void {
  const bridge = program
    .command('bridge-tokens')
    .description('terminal bridge tokens of a self-hosted MetaTrader account (shown once, stored hashed)');
  const bridgeCmd = (name: string, description: string) =>
    bridge
      .command(name)
      .description(description)
      .requiredOption('--email <email>')
      .requiredOption('--account <accountId>')
      .option(...dataDirOpt)
      .option('--json');
  bridgeCmd('create', 'a new token for the account (its other tokens keep working)').action(
    async (o: StoreFlags & { email: string; account: string }) => {
      const t = (await runAdmin(o, 'bridge-tokens.create', { email: o.email, account: o.account })) as {
        id: string;
        token: string;
      };
      out(o.json, t, `bridge token ${t.id} (shown once):\n${t.token}`);
    },
  );
  bridgeCmd('rotate', 'a new token; the others stop after --overlap seconds (default 86400)')
    .option('--overlap <seconds>')
    .action(async (o: StoreFlags & { email: string; account: string; overlap?: string }) => {
      const t = (await runAdmin(o, 'bridge-tokens.rotate', {
        email: o.email,
        account: o.account,
        overlap: o.overlap ?? null,
      })) as { id: string; token: string };
      out(o.json, t, `bridge token ${t.id} (shown once):\n${t.token}`);
    });
  bridgeCmd('list', "the account's tokens (never their values)").action(
    async (o: StoreFlags & { email: string; account: string }) => {
      const list = (await runAdmin(o, 'bridge-tokens.list', { email: o.email, account: o.account })) as Array<{
        id: string;
        createdAt: string;
        expiresAt: string | null;
        revokedAt: string | null;
        live: boolean;
      }>;
      out(o.json, list, () =>
        table(
          list,
          [
            ['id', (t) => t.id],
            ['created', (t) => t.createdAt],
            ['expires', (t) => t.expiresAt ?? ''],
            ['revoked', (t) => t.revokedAt ?? ''],
            ['live', (t) => String(t.live)],
          ],
          'no bridge tokens',
        ),
      );
    },
  );
  bridgeCmd('revoke', 'end a token now (its EA is refused at its next connect)')
    .requiredOption('--id <tokenId>')
    .action(async (o: StoreFlags & { email: string; account: string; id: string }) => {
      const r = await runAdmin(o, 'bridge-tokens.revoke', { email: o.email, account: o.account, id: o.id });
      out(o.json, r, `bridge token ${o.id} revoked`);
    });
}
