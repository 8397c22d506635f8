import type { Command } from 'commander';
import type { CopyRulePatch, CopytradeClient } from '../../client/index.js';
import { platformName } from '../../client/platform-names.js';
import { AppError } from '../../domain/errors.js';
import { clientFor, withApiOptions, type ApiFlags } from '../api-context.js';
import { fields, out, table } from '../output.js';

type Sizing = NonNullable<CopyRulePatch['sizing']>;

/** A Slave's rule lives in its group's view (there is no GET on copy-rule): the account, then its group. */
async function currentRule(ct: CopytradeClient, accountId: string) {
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

const dec = (name: string, v: string): string => {
  if (!/^[0-9]+(\.[0-9]+)?$/.test(v))
    throw new AppError('invalid_request', `${name} must be a positive decimal such as 0.5, got ${JSON.stringify(v)}`);
  return v;
};
const list = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

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

  withApiOptions(
    rules
      .command('set <accountId>')
      .description(
        "change a Slave's copy rule (what is not given stays as it is); checked against the Slave's platform",
      ),
  )
    .option('--multiplier <x>', 'sizing: Master volume times x')
    .option('--fixed <lots>', 'sizing: always this volume')
    .option('--balance-ratio [x]', 'sizing: by the balance ratio (times x)')
    .option('--equity-ratio [x]', 'sizing: by the equity ratio (times x)')
    .option('--risk-percent <p>', "sizing: lose p % of the Slave's equity at the stop")
    .option('--min-volume <lots>')
    .option('--max-volume <lots>')
    .option('--max-slippage <price>', 'skip market copies whose price is worse by more than this')
    .option('--max-delay-ms <ms>', 'skip copies older than this')
    .option('--include <symbols>', 'only these symbols (comma separated)')
    .option('--exclude <symbols>', 'never these symbols (comma separated)')
    .option('--map <pairs>', 'symbol map, e.g. EURUSD=EURUSD.r,XAUUSD=GOLD')
    .option('--reverse')
    .option('--no-reverse')
    .option('--copy-sl')
    .option('--no-copy-sl')
    .option('--copy-tp')
    .option('--no-copy-tp')
    .option('--copy-pending')
    .option('--no-copy-pending')
    .option('--body <json>', 'the whole rule patch as JSON (flags above override its fields)')
    .action(async (accountId: string, o: ApiFlags & Record<string, string | boolean | undefined>) => {
      let patch: CopyRulePatch = {};
      if (typeof o.body === 'string') {
        try {
          patch = JSON.parse(o.body) as CopyRulePatch;
        } catch {
          throw new AppError(
            'invalid_request',
            '--body must be JSON, e.g. {"sizing":{"mode":"multiplier","multiplier":"0.5"}}',
          );
        }
      }
      const sizings: Sizing[] = [];
      if (typeof o.multiplier === 'string')
        sizings.push({ mode: 'multiplier', multiplier: dec('--multiplier', o.multiplier) });
      if (typeof o.fixed === 'string') sizings.push({ mode: 'fixed', volume: dec('--fixed', o.fixed) });
      if (o.balanceRatio !== undefined)
        sizings.push({
          mode: 'balance_ratio',
          ...(typeof o.balanceRatio === 'string' ? { multiplier: dec('--balance-ratio', o.balanceRatio) } : {}),
        });
      if (o.equityRatio !== undefined)
        sizings.push({
          mode: 'equity_ratio',
          ...(typeof o.equityRatio === 'string' ? { multiplier: dec('--equity-ratio', o.equityRatio) } : {}),
        });
      if (typeof o.riskPercent === 'string')
        sizings.push({ mode: 'risk_percent', riskPercent: dec('--risk-percent', o.riskPercent) });
      if (sizings.length > 1)
        throw new AppError(
          'invalid_request',
          'give one sizing: --multiplier, --fixed, --balance-ratio, --equity-ratio or --risk-percent',
        );
      if (sizings[0]) patch.sizing = sizings[0];
      if (typeof o.minVolume === 'string') patch.minVolume = dec('--min-volume', o.minVolume);
      if (typeof o.maxVolume === 'string') patch.maxVolume = dec('--max-volume', o.maxVolume);
      if (typeof o.maxSlippage === 'string') patch.maxSlippage = dec('--max-slippage', o.maxSlippage);
      if (typeof o.maxDelayMs === 'string') patch.maxDelayMs = Number(dec('--max-delay-ms', o.maxDelayMs));
      if (typeof o.include === 'string') patch.includeSymbols = list(o.include);
      if (typeof o.exclude === 'string') patch.excludeSymbols = list(o.exclude);
      if (typeof o.map === 'string') {
        patch.symbolMap = Object.fromEntries(
          list(o.map).map((pair) => {
            const [from, to] = pair.split('=');
            if (!from || !to)
              throw new AppError('invalid_request', `--map takes FROM=TO pairs, got ${JSON.stringify(pair)}`);
            return [from, to];
          }),
        );
      }
      // Commander's --x/--no-x pairs: undefined unless given.
      if (typeof o.reverse === 'boolean') patch.reverse = o.reverse;
      if (typeof o.copySl === 'boolean') patch.copyStopLoss = o.copySl;
      if (typeof o.copyTp === 'boolean') patch.copyTakeProfit = o.copyTp;
      if (typeof o.copyPending === 'boolean') patch.copyPendingOrders = o.copyPending;
      const ct = clientFor(o);
      // The route puts defaults where a field is left out; a person changing one thing means "keep the rest".
      const body = { ...(await currentRule(ct, accountId)), ...patch };
      const rule = await ct.call(
        ct.api.PUT('/v1/accounts/{account_id}/copy-rule', { params: { path: { account_id: accountId } }, body }),
      );
      out(o.json, rule, () => `copy rule of ${accountId} saved:\n${fields(Object.entries(rule))}`);
    });
}
