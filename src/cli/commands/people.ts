import type { Command } from 'commander';
import { dataDirOpt, runAdmin, type StoreFlags } from '../admin-store.js';
import { out, table } from '../output.js';

interface TargetFlags extends StoreFlags {
  account?: string;
  group?: string;
}
const target = (o: TargetFlags) => ({ account: o.account, group: o.group });
const what = (o: TargetFlags) => (o.account ? `account ${o.account}` : `group ${o.group}`);

/**
 * The operator's people commands (docs/people.md): `users verify` and `users reset-second-factor`, and
 * `access grant|revoke|list` for the roles on an account or a copier group (granted for its owner).
 */
export function peopleCommands(program: Command): void {
  const users = program.commands.find((c) => c.name() === 'users') ?? program.command('users');
  users
    .command('verify')
    .description("mark a signed-up user's email as verified (they can sign in without the link)")
    .requiredOption('--email <email>')
    .option(...dataDirOpt)
    .option('--json')
    .action(async (o: StoreFlags & { email: string }) => {
      const r = await runAdmin(o, 'users.verify', { email: o.email });
      out(o.json, r, `${o.email} verified`);
    });
  users
    .command('reset-second-factor')
    .description("turn a user's second factor off (a lost phone and lost recovery codes); they enrol again")
    .requiredOption('--email <email>')
    .option(...dataDirOpt)
    .option('--json')
    .action(async (o: StoreFlags & { email: string }) => {
      const r = await runAdmin(o, 'users.reset-second-factor', { email: o.email });
      out(o.json, r, `second factor of ${o.email} turned off; recovery codes deleted`);
    });

  const access = program.command('access').description('roles of users on accounts and copier groups');
  const withTarget = (c: Command) =>
    c
      .option('--account <id>', 'the account')
      .option('--group <id>', 'the copier group (a role on it covers its accounts)')
      .option(...dataDirOpt)
      .option('--json');
  withTarget(
    access
      .command('grant')
      .description('give a user a role (owner, trader, read_only); a second grant replaces the role')
      .requiredOption('--user <email-or-id>')
      .requiredOption('--role <role>', 'owner | trader | read_only'),
  ).action(async (o: TargetFlags & { user: string; role: string }) => {
    const r = (await runAdmin(o, 'access.grant', { ...target(o), user: o.user, role: o.role })) as { email: string };
    out(o.json, r, `${r.email} is ${o.role} on ${what(o)}`);
  });
  withTarget(
    access.command('revoke').description("take a user's role away").requiredOption('--user <email-or-id>'),
  ).action(async (o: TargetFlags & { user: string }) => {
    const r = await runAdmin(o, 'access.revoke', { ...target(o), user: o.user });
    out(o.json, r, `${o.user} has no role on ${what(o)} any more`);
  });
  withTarget(access.command('list').description('who else holds a role')).action(async (o: TargetFlags) => {
    const rows = (await runAdmin(o, 'access.list', target(o))) as Array<{
      email: string;
      role: string;
      userId: string;
    }>;
    out(o.json, rows, () =>
      table(
        rows,
        [
          ['email', (g) => g.email],
          ['role', (g) => g.role],
          ['user id', (g) => g.userId],
        ],
        `nobody else holds a role on ${what(o)}`,
      ),
    );
  });
}
