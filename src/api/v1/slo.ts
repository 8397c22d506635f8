import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { invalid } from '../../domain/errors.js';
import { monthPeriod, monthReport } from '../../domain/slo/report.js';
import { parseTarget, targetOf } from '../../domain/slo/target.js';
import { groupLevels, slavesOf } from '../../engine/slo/slo-levels.js';
import { type ApiDeps, ownedAccount, reqGroup } from '../deps.js';
import { AccountIdParams, OPEN, stdErrors } from '../schemas.js';
import type { RouteOpts } from './route-opts.js';
import { breachJson, GroupSloSchema, ReportSchema, TargetBody, targetJson } from './slo-json.js';

const GroupParams = Type.Object({ group_id: Type.String({ minLength: 1, maxLength: 64 }) });

/** Service levels per Slave (docs/slo.md): a target per copier group, its levels now, a Slave's monthly report. */
export async function sloRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;
  const tags = ['Service levels'];
  const store = deps.store;

  /** The group's target and its Slaves' levels over the target's window (60 min when none is set). */
  const groupView = async (userId: string, groupId: string) => {
    const row = await store.slo.target(groupId);
    const target = row ? targetOf(row.target) : null;
    const to = new Date();
    const from = new Date(to.getTime() - (target ?? targetOf({})).windowMinutes * 60_000);
    const levels = await groupLevels(store, groupId, await slavesOf(store, userId, groupId), from, to);
    return {
      groupId,
      target: target ? targetJson(target) : null,
      updatedAt: row ? row.updatedAt.toISOString() : null,
      from: from.toISOString(),
      to: to.toISOString(),
      group: levels.group,
      slaves: levels.slaves,
      breaches: (await store.slo.breaches({ groupId })).map(breachJson),
    };
  };

  r.put(
    `${prefix}/copier-groups/:group_id/slo`,
    {
      onRequest: auth,
      schema: {
        operationId: 'setGroupSlo',
        hide,
        tags,
        security,
        ...OPEN,
        summary: "Set a copier group's service-level target",
        description:
          'Every Slave of the group must meet it over the rolling window: latency from the Master deal to the Slave ' +
          "broker's answer (p99, p50), copy success, drift grade, mean slippage. A field left out or null is not " +
          'watched; the whole target is replaced. A breach raises slo.breached (once) and slo.recovered when it ends.',
        params: GroupParams,
        body: TargetBody,
        response: { 200: GroupSloSchema, ...stdErrors(403) },
      },
    },
    async (req) => {
      const { ownerId: userId } = await reqGroup(deps, req, req.params.group_id, 'manage');
      const target = parseTarget(req.body as Record<string, unknown>);
      await store.slo.setTarget(userId, req.params.group_id, target);
      return groupView(userId, req.params.group_id);
    },
  );

  r.get(
    `${prefix}/copier-groups/:group_id/slo`,
    {
      onRequest: auth,
      schema: {
        operationId: 'getGroupSlo',
        hide,
        tags,
        security,
        ...OPEN,
        summary: "A copier group's service-level target, each Slave's levels over its window, and breaches in progress",
        params: GroupParams,
        response: { 200: GroupSloSchema, ...stdErrors() },
      },
    },
    async (req) => {
      const { ownerId: userId } = await reqGroup(deps, req, req.params.group_id, 'read');
      return groupView(userId, req.params.group_id);
    },
  );

  r.get(
    `${prefix}/accounts/:account_id/slo-report`,
    {
      onRequest: auth,
      schema: {
        operationId: 'getAccountSloReport',
        hide,
        tags,
        security,
        ...OPEN,
        summary: "A Slave's service levels over a calendar month (UTC), per day, against its group's target",
        params: AccountIdParams,
        querystring: Type.Object(
          {
            month: Type.Optional(
              Type.String({
                pattern: '^[0-9]{4}-[0-9]{2}$',
                description: 'YYYY-MM, UTC; default the current month',
                maxLength: 7,
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: ReportSchema, ...stdErrors() },
      },
    },
    async (req) => {
      const a = await ownedAccount(deps, req, req.params.account_id, 'read');
      if (a.role !== 'slave') throw invalid('service levels are reported for Slave accounts');
      const now = Date.now();
      const month = req.query.month ?? new Date(now).toISOString().slice(0, 7);
      const { from, to } = monthPeriod(month, now);
      const row = a.groupId ? await store.slo.target(a.groupId) : null;
      const target = row ? targetOf(row.target) : null;
      const report = monthReport(await store.slo.ledgerRows([a.id], from, to), target);
      return {
        accountId: a.id,
        groupId: a.groupId,
        month,
        from: from.toISOString(),
        to: to.toISOString(),
        currency: a.currency,
        target: target ? targetJson(target) : null,
        ...report,
        breaches: (await store.slo.breaches({ accountId: a.id })).map(breachJson),
      };
    },
  );
}
