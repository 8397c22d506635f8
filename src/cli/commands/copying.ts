import { Option, type Command } from 'commander';
import { AppError } from '../../domain/errors.js';
import { clientFor, withApiOptions, type ApiFlags } from '../api-context.js';
import { out, table } from '../output.js';

type Flags = ApiFlags & { account?: string; group?: string };

/**
 * `copytrade pause|resume --account A | --group G`: copying off and on again. `resume` is also how a trader
 * lifts the lock a panic-close leaves (refused with the job id while the job still runs).
 */
export function copyingCommands(program: Command): void {
  for (const action of ['pause', 'resume'] as const) {
    withApiOptions(
      program
        .command(action)
        .description(
          action === 'pause'
            ? 'stop copying to an account, or to every account of a copier group'
            : 'copy again to an account or a copier group (also lifts the lock a finished panic-close leaves)',
        ),
    )
      .addOption(new Option('--account <accountId>', 'one account').conflicts('group'))
      .addOption(new Option('--group <groupId>', 'every account of a copier group').conflicts('account'))
      .action(async (o: Flags) => {
        if (!o.account && !o.group)
          throw new AppError('invalid_request', `say what to ${action}: --account <id> or --group <id>`);
        const ct = clientFor(o);
        if (o.account) {
          const path = { account_id: o.account };
          const a = await ct.call(
            action === 'pause'
              ? ct.api.POST('/v1/accounts/{account_id}/pause', { params: { path } })
              : ct.api.POST('/v1/accounts/{account_id}/resume', { params: { path } }),
          );
          out(o.json, a, () => `${a.id} (${a.name}): ${a.status}${a.statusReason ? ` (${a.statusReason})` : ''}`);
          return;
        }
        const path = { group_id: o.group! };
        const g = await ct.call(
          action === 'pause'
            ? ct.api.POST('/v1/copier-groups/{group_id}/pause', { params: { path } })
            : ct.api.POST('/v1/copier-groups/{group_id}/resume', { params: { path } }),
        );
        const members = [g.master, ...g.slaves].filter((m): m is NonNullable<typeof m> => !!m);
        out(o.json, g, () =>
          table(members, [
            ['account', (m) => m.id],
            ['name', (m) => m.name],
            ['role', (m) => m.role],
            ['status', (m) => m.status],
          ]),
        );
      });
  }
}
