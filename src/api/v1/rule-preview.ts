import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Decimal } from '../../domain/decimal.js';
import { ruleOnly, withDefaults, type CopyRule } from '../../domain/copy-rule.js';
import { refuseUnworkableRule } from './rule-problems.js';
import { invalid } from '../../domain/errors.js';
import {
  DEFAULT_PREVIEW_DAYS,
  MAX_PREVIEW_DAYS,
  previewRule,
  type WhatIfPreview,
} from '../../engine/what-if/preview.js';
import type { CopyDiff, CopyOutcome } from '../../engine/what-if/replay.js';
import type { SideTotals } from '../../engine/what-if/summary.js';
import { ownedAccount, type ApiDeps } from '../deps.js';
import { AccountIdParams, OPEN, stdErrors } from '../schemas.js';
import type { RouteOpts } from './route-opts.js';
import { copyRuleIn, CopyRulePatch, CopyRuleSchema, toCopyRuleJson } from './copy-rule-schema.js';
import { numberOut } from '../decimal-json.js';

const N = Type.Union([Type.Number(), Type.Null()]);
const Outcome = Type.Object({
  volume: Type.Union([Type.Number(), Type.Null()], { description: 'the planned volume; null = nothing sent' }),
  side: Type.String(),
  skipReason: Type.Union([Type.String(), Type.Null()], { description: "the planner's skip code" }),
  riskLimit: Type.Union([Type.String(), Type.Null()], {
    description: "the risk guard's refusal code, or `shrunk` where it lowered the volume",
  }),
  profit: Type.Union([Type.Number(), Type.Null()], {
    description: "at the recorded prices, in the Slave's currency; null while the Master's position is open",
  }),
});
const Totals = Type.Object({
  sent: Type.Integer(),
  skipped: Type.Integer(),
  riskLimitHits: Type.Integer(),
  volume: Type.Number(),
  profit: Type.Number(),
});
const PreviewSchema = Type.Object(
  {
    accountId: Type.String(),
    from: Type.String(),
    to: Type.String(),
    days: Type.Integer(),
    rule: CopyRuleSchema,
    rows: Type.Integer({ description: "the Slave's ledger rows in the period" }),
    followUps: Type.Integer({
      description: 'rows that follow a copy (closes, reductions, changes): not sized, not listed',
    }),
    copies: Type.Array(
      Type.Object({
        intentId: Type.String(),
        tradeId: Type.String(),
        action: Type.String(),
        at: Type.String(),
        symbol: Type.String(),
        state: Type.String({ description: "the row's state: what happened to it" }),
        changed: Type.Boolean(),
        done: Outcome,
        candidate: Outcome,
        volumeDiff: Type.Number({ description: 'candidate - done' }),
        profitDiff: N,
      }),
    ),
    totals: Type.Object({
      copies: Type.Integer(),
      changed: Type.Integer(),
      done: Totals,
      candidate: Totals,
      volumeDiff: Type.Number(),
      profitDiff: Type.Number(),
    }),
  },
  OPEN,
);
const Body = Type.Object(
  {
    rule: CopyRulePatch,
    days: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 36_600,
        description: `how many days back to replay: default ${DEFAULT_PREVIEW_DAYS}, at most ${MAX_PREVIEW_DAYS}`,
      }),
    ),
    changedOnly: Type.Optional(Type.Boolean({ description: 'list only the copies the candidate changes' })),
  },
  { additionalProperties: false },
);

const orZero = (d: Decimal | null): Decimal => d ?? new Decimal(0);
const num = (d: Decimal | null): number | null => (d === null ? null : numberOut(d.toString()));
const money = (d: Decimal | null): number | null => (d === null ? null : numberOut(d.toFixed(2)));
const outcomeJson = (o: CopyOutcome) => ({
  volume: num(o.volume),
  side: o.side,
  skipReason: o.skipReason,
  riskLimit: o.riskLimit,
  profit: money(o.profit),
});
const totalsJson = (t: SideTotals) => ({ ...t, volume: num(t.volume)!, profit: money(t.profit)! });
const copyJson = (c: CopyDiff) => ({
  intentId: c.intentId,
  tradeId: c.tradeId,
  action: c.action,
  at: c.at.toISOString(),
  symbol: c.symbol,
  state: c.state,
  changed: c.changed,
  done: outcomeJson(c.done),
  candidate: outcomeJson(c.candidate),
  volumeDiff: num(orZero(c.candidate.volume).minus(orZero(c.done.volume)))!,
  profitDiff:
    c.done.profit === null && c.candidate.profit === null
      ? null
      : money(orZero(c.candidate.profit).minus(orZero(c.done.profit))),
});

function previewJson(accountId: string, days: number, rule: CopyRule, p: WhatIfPreview, changedOnly: boolean) {
  return {
    accountId,
    from: p.from.toISOString(),
    to: p.to.toISOString(),
    days,
    rule: toCopyRuleJson(rule),
    rows: p.rows,
    followUps: p.followUps,
    copies: (changedOnly ? p.copies.filter((c) => c.changed) : p.copies).map(copyJson),
    totals: {
      ...p.totals,
      done: totalsJson(p.totals.done),
      candidate: totalsJson(p.totals.candidate),
      volumeDiff: num(p.totals.volumeDiff)!,
      profitDiff: money(p.totals.profitDiff)!,
    },
  };
}

/** The what-if preview of a candidate copy rule (docs/what-if.md). */
export async function rulePreviewRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;
  r.post(
    `${prefix}/accounts/:account_id/rule-preview`,
    {
      onRequest: auth,
      schema: {
        operationId: 'previewCopyRule',
        hide,
        tags: ['Copier groups'],
        security,
        ...OPEN,
        summary:
          "Replay the Slave's recorded copies of the last `days` (default 30, at most 90) with a candidate rule through the planner; per copy, what was done and what the candidate would do. Fields left out of `rule` keep the Slave's current rule. Writes nothing.",
        params: AccountIdParams,
        body: Body,
        response: { 200: PreviewSchema, ...stdErrors(403) },
      },
    },
    async (req) => {
      const account = await ownedAccount(deps, req, req.params.account_id, 'manage');
      if (account.role !== 'slave')
        throw invalid(`account ${account.id} is a ${account.role}; copy rules belong to Slaves`);
      const days = req.body.days ?? DEFAULT_PREVIEW_DAYS;
      if (days > MAX_PREVIEW_DAYS)
        throw invalid(
          `days must be at most ${MAX_PREVIEW_DAYS}: a preview replays at most the last ${MAX_PREVIEW_DAYS} days (asked ${days})`,
        );
      const current = (await deps.store.accounts.rulesFor([account.id])).get(account.id) ?? withDefaults(undefined);
      const patch = copyRuleIn(req.body.rule as Record<string, unknown>);
      const rule: CopyRule = { ...ruleOnly(current), ...patch, sizing: patch.sizing ?? current.sizing };
      await refuseUnworkableRule(deps, account, rule);
      const preview = await previewRule(deps.store, account, rule, days, new Date());
      return previewJson(account.id, days, rule, preview, req.body.changedOnly ?? false);
    },
  );
}
