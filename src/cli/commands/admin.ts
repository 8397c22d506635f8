import type { Command } from 'commander';
import { dataDirOpt, runAdmin, type StoreFlags } from '../admin-store.js';
import { out, table } from '../output.js';

/**
 * The operator's commands (migrate, users, tokens, keys). They work with the server stopped, beside it on
 * PostgreSQL, and through a running server's operator listener on the embedded store (see admin-store.ts).
 */
export function adminCommands(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations')
    .option(...dataDirOpt)
    .option('--json')
    .action(async (o: StoreFlags) => {
      const r = (await runAdmin(o, 'migrate', {})) as { store: string; location: string };
      out(o.json, { ok: true, store: r.store }, `migrations applied (${r.store} at ${r.location})`);
    });

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
}
