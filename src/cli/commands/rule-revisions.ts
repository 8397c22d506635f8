import { Option, type Command } from 'commander';
import { AppError } from '../../domain/errors.js';
import { clientFor, withApiOptions, type ApiFlags } from '../api-context.js';
import { out, table } from '../output.js';
import { ruleOptions, rulePatchOf, type RuleFlags } from './rule-flags.js';

type Target = ApiFlags & { account?: string; group?: string };

const targetOptions = (cmd: Command) =>
  cmd
    .addOption(new Option('--account <accountId>', 'a Slave: its copy rule and own risk limits').conflicts('group'))
    .addOption(new Option('--group <groupId>', 'a copier group: its risk limits').conflicts('account'));

const change = (d: { field: string; before: unknown; after: unknown }) =>
  `${d.field}: ${JSON.stringify(d.before)} -> ${JSON.stringify(d.after)}`;

/**
 * `copytrade rules preview|revisions|rollback` (docs/what-if.md): a candidate rule replayed over the Slave's
 * recorded copies, the numbered revisions of a rule, and a rollback to one of them.
 */
export function ruleRevisionCommands(rules: Command): void {
  ruleOptions(
    withApiOptions(
      rules
        .command('preview')
        .description(
          "replay a Slave's recorded copies of the last days with a changed rule (what is not given stays as it is); writes nothing",
        )
        .requiredOption('--account <accountId>', 'the Slave')
        .option('--days <n>', 'how many days back (default 30, at most 90)')
        .option('--all', 'list every copy, not only those the change changes'),
    ),
  ).action(async (o: ApiFlags & RuleFlags & { account: string; days?: string; all?: boolean }) => {
    const ct = clientFor(o);
    const days = o.days === undefined ? undefined : Number(o.days);
    if (days !== undefined && !Number.isInteger(days))
      throw new AppError('invalid_request', `--days must be a whole number of days, got ${JSON.stringify(o.days)}`);
    const p = await ct.call(
      ct.api.POST('/v1/accounts/{account_id}/rule-preview', {
        params: { path: { account_id: o.account } },
        body: { rule: rulePatchOf(o), ...(days !== undefined ? { days } : {}), changedOnly: !o.all },
      }),
    );
    out(o.json, p, () => {
      const t = p.totals;
      const rows = table(
        p.copies,
        [
          ['at', (c) => c.at],
          ['symbol', (c) => c.symbol],
          ['action', (c) => c.action],
          ['done', (c) => c.done.volume ?? c.done.skipReason ?? c.done.riskLimit ?? '-'],
          ['candidate', (c) => c.candidate.volume ?? c.candidate.skipReason ?? c.candidate.riskLimit ?? '-'],
          ['profit done', (c) => c.done.profit ?? '-'],
          ['profit candidate', (c) => c.candidate.profit ?? '-'],
        ],
        p.rows === 0 ? `no recorded copies of ${o.account} since ${p.from}` : 'no copy changes',
      );
      return `${rows}\n${t.copies} copies, ${t.changed} changed; volume ${t.done.volume} -> ${t.candidate.volume} (${t.volumeDiff >= 0 ? '+' : ''}${t.volumeDiff}); profit ${t.done.profit} -> ${t.candidate.profit} (${t.profitDiff >= 0 ? '+' : ''}${t.profitDiff}); risk-limit hits ${t.done.riskLimitHits} -> ${t.candidate.riskLimitHits}`;
    });
  });

  targetOptions(
    withApiOptions(
      rules.command('revisions').description("the numbered revisions of a Slave's rule or a group's limits"),
    ),
  ).action(async (o: Target) => {
    const ct = clientFor(o);
    const list = o.account
      ? await ct.call(
          ct.api.GET('/v1/accounts/{account_id}/rule-revisions', { params: { path: { account_id: o.account } } }),
        )
      : o.group
        ? await ct.call(
            ct.api.GET('/v1/copier-groups/{group_id}/rule-revisions', { params: { path: { group_id: o.group } } }),
          )
        : null;
    if (!list) throw new AppError('invalid_request', 'say whose revisions: --account <id> or --group <id>');
    out(o.json, list, () =>
      table(list.revisions, [
        ['#', (r) => r.revision],
        ['at', (r) => r.createdAt],
        ['by', (r) => r.actor],
        ['source', (r) => (r.rolledBackTo ? `rollback to #${r.rolledBackTo}` : r.source)],
        ['changes', (r) => r.diff.map(change).join('; ') || '-'],
      ]),
    );
  });

  targetOptions(
    withApiOptions(
      rules
        .command('rollback')
        .description('put back a revision: a new revision equal to it')
        .requiredOption('--to <revision>', 'the revision number to put back'),
    ),
  ).action(async (o: Target & { to: string }) => {
    const revision = Number(o.to);
    if (!Number.isInteger(revision) || revision < 1)
      throw new AppError('invalid_request', `--to must be a revision number, got ${JSON.stringify(o.to)}`);
    const ct = clientFor(o);
    const body = { revision };
    const r = o.account
      ? await ct.call(
          ct.api.POST('/v1/accounts/{account_id}/rule-revisions/rollback', {
            params: { path: { account_id: o.account } },
            body,
          }),
        )
      : o.group
        ? await ct.call(
            ct.api.POST('/v1/copier-groups/{group_id}/rule-revisions/rollback', {
              params: { path: { group_id: o.group } },
              body,
            }),
          )
        : null;
    if (!r) throw new AppError('invalid_request', 'say what to roll back: --account <id> or --group <id>');
    out(
      o.json,
      r,
      () =>
        `revision #${r.revision} of ${r.targetId} puts back #${revision}:\n${r.diff.map(change).join('\n') || '(nothing changed)'}`,
    );
  });
}
