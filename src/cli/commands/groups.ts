import type { Command } from 'commander';
import type { CopytradeClient } from '../../client/index.js';
import { ruleOptions, rulePatchOf, type RuleFlags } from './rule-flags.js';
import { ruleRevisionCommands } from './rule-revisions.js';
import { platformName } from '../../client/platform-names.js';
import { AppError } from '../../domain/errors.js';
import { clientFor, withApiOptions, type ApiFlags } from '../api-context.js';
import { fields, out, table } from '../output.js';

/** A Slave's rule lives in its group's view (there is no GET on copy-rule): the account, then its group. */
export async function currentRule(ct: CopytradeClient, accountId: string) {
  const a = await ct.call(ct.api.GET('/v1/accounts/{account_id}', { params: { path: { account_id: accountId } } }));
  if (!a.groupId || a.role !== 'slave')
    throw new AppError(
      'invalid_request',
      `account ${a.id} is ${a.groupId ? `the Master of ${a.groupId}` : 'in no copier group'}; copy rules belong to Slaves`,
    );
  const g = await ct.call(ct.api.GET('/v1/copier-groups/{group_id}', { params: { path: { group_id: a.groupId } } }));
  const rule = g.slaves.find((s) => s.id === a.id)?.rule;
  if (!rule) throw new AppError('not_found', `account ${a.id} is not a Slave of ${a.groupId}`);
  return rule;
}

export function groupCommands(program: Command): void {
  withApiOptions(
    program
      .command('groups [groupId]')
      .description('copier groups; with an id, its Master and Slaves with their rules'),
  ).action(async (groupId: string | undefined, o: ApiFlags) => {
    const ct = clientFor(o);
    if (groupId) {
      const g = await ct.call(ct.api.GET('/v1/copier-groups/{group_id}', { params: { path: { group_id: groupId } } }));
      out(
        o.json,
        g,
        () =>
          fields([
            ['group', g.id],
            ['name', g.name],
            [
              'master',
              g.master
                ? `${g.master.id} ${g.master.name} (${platformName(g.master.platform)}, ${g.master.status})`
                : null,
            ],
          ]) +
          '\n\n' +
          table(
            g.slaves,
            [
              ['slave', (s) => s.id],
              ['name', (s) => s.name],
              ['platform', (s) => platformName(s.platform)],
              ['status', (s) => s.status],
              ['sizing', (s) => s.rule.sizing],
              ['reverse', (s) => s.rule.reverse],
            ],
            'no Slaves',
          ),
      );
      return;
    }
    const r = await ct.call(ct.api.GET('/v1/copier-groups'));
    out(o.json, r, () =>
      table(
        r.groups,
        [
          ['id', (g) => g.id],
          ['name', (g) => g.name],
          ['master', (g) => g.master?.id],
          ['slaves', (g) => g.slaves.length],
          ['created', (g) => g.createdAt],
        ],
        'no copier groups',
      ),
    );
  });

  const rules = program.command('rules').description("a Slave's copy rule");
  withApiOptions(
    rules.command('get <accountId>').description('the copy rule of a Slave (from its copier group)'),
  ).action(async (accountId: string, o: ApiFlags) => {
    const rule = await currentRule(clientFor(o), accountId);
    out(o.json, rule, () => fields(Object.entries(rule)));
  });

  ruleOptions(
    withApiOptions(
      rules
        .command('set <accountId>')
        .description(
          "change a Slave's copy rule (what is not given stays as it is); checked against the Slave's platform",
        ),
    ),
  ).action(async (accountId: string, o: ApiFlags & RuleFlags) => {
    const patch = rulePatchOf(o);
    const ct = clientFor(o);
    // The route puts defaults where a field is left out; a person changing one thing means "keep the rest".
    const body = { ...(await currentRule(ct, accountId)), ...patch };
    const rule = await ct.call(
      ct.api.PUT('/v1/accounts/{account_id}/copy-rule', { params: { path: { account_id: accountId } }, body }),
    );
    out(o.json, rule, () => `copy rule of ${accountId} saved:\n${fields(Object.entries(rule))}`);
  });

  ruleRevisionCommands(rules);
}
