import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { notFound } from '../../domain/errors.js';
import type { RuleRevision } from '../../domain/revisions/revision.js';
import { EMPTY_STATE } from '../../engine/risk/evaluate.js';
import { ownedAccount, reqGroup, type ApiDeps } from '../deps.js';
import type { Need } from '../../domain/people/roles.js';
import { whoOf } from '../plugins/auth.js';
import { AccountIdParams, OPEN, stdErrors } from '../schemas.js';
import type { RouteOpts } from './route-opts.js';
import { CopyRuleSchema, toCopyRuleJson } from './copy-rule-schema.js';

const RevisionSchema = Type.Object(
  {
    targetId: Type.String({ description: 'the Slave account (its copy rule and own risk limits) or the copier group' }),
    scope: Type.Union([Type.Literal('account'), Type.Literal('group')]),
    revision: Type.Integer({ description: "the target's revision number, from 1" }),
    createdAt: Type.String(),
    userId: Type.String(),
    actor: Type.String({
      description:
        'the credential that made the change: key:<id> or session:<id>; system or migration for the state found before the first recorded change',
    }),
    source: Type.Union([
      Type.Literal('copy_rule'),
      Type.Literal('risk_limits'),
      Type.Literal('rollback'),
      Type.Literal('migration'),
      Type.Literal('initial'),
    ]),
    rolledBackTo: Type.Optional(Type.Integer({ description: 'for a rollback: the revision it put back' })),
    diff: Type.Array(Type.Object({ field: Type.String(), before: Type.Unknown(), after: Type.Unknown() }), {
      description: 'the fields the change changed, by dotted path; decimals as the store keeps them (strings)',
    }),
    snapshot: Type.Object({
      rule: Type.Optional(Type.Union([CopyRuleSchema, Type.Null()])),
      riskLimits: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    }),
  },
  OPEN,
);
const RevisionList = Type.Object({ revisions: Type.Array(RevisionSchema) });
const RollbackBody = Type.Object(
  { revision: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) },
  { additionalProperties: false },
);
const GroupParams = Type.Object({ group_id: Type.String({ minLength: 1, maxLength: 64 }) });
const ListQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })) },
  { additionalProperties: false },
);

export const revisionJson = (r: RuleRevision) => ({
  targetId: r.targetId,
  scope: r.scope,
  revision: r.seq,
  createdAt: r.createdAt.toISOString(),
  userId: r.userId,
  actor: r.actor,
  source: r.source,
  ...(r.rolledBackTo !== undefined ? { rolledBackTo: r.rolledBackTo } : {}),
  diff: r.diff,
  snapshot: {
    ...(r.scope === 'account' ? { rule: r.snapshot.rule ? toCopyRuleJson(r.snapshot.rule) : null } : {}),
    riskLimits: r.snapshot.riskLimits,
  },
});

/** Rule revisions (docs/what-if.md): a Slave's or a group's numbered changes, and a rollback to one of them. */
export async function ruleRevisionRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;
  const tags = ['Copier groups'];
  const rollback = async (req: FastifyRequest, target: { id: string; ownerId: string }, revision: number) => {
    const done = await deps.store.revisions.rollback(whoOf(req, target.ownerId), target.id, revision, EMPTY_STATE);
    if (!done) throw notFound('rule revision');
    // The guard holds the limits in memory: read them again, so the rollback takes effect now, not at its next tick.
    await deps.risk.load();
    return revisionJson(done);
  };

  const targets = [
    {
      path: `${prefix}/accounts/:account_id`,
      params: AccountIdParams,
      what: "a Slave's copy rule and the account's own risk limits",
      op: 'Account',
      owned: async (req: FastifyRequest, need: Need) => {
        const a = await ownedAccount(deps, req, (req.params as { account_id: string }).account_id, need);
        return { id: a.id, ownerId: a.userId };
      },
    },
    {
      path: `${prefix}/copier-groups/:group_id`,
      params: GroupParams,
      what: "a copier group's risk limits",
      op: 'Group',
      owned: async (req: FastifyRequest, need: Need) =>
        reqGroup(deps, req, (req.params as { group_id: string }).group_id, need),
    },
  ];
  for (const t of targets) {
    r.get(
      `${t.path}/rule-revisions`,
      {
        onRequest: auth,
        schema: {
          operationId: `list${t.op}RuleRevisions`,
          hide,
          tags,
          security,
          ...OPEN,
          summary: `The numbered revisions of ${t.what}, latest first`,
          params: t.params,
          querystring: ListQuery,
          response: { 200: RevisionList, ...stdErrors() },
        },
      },
      async (req) => {
        const { id } = await t.owned(req, 'read');
        const limit = (req.query as { limit?: number }).limit ?? 100;
        return { revisions: (await deps.store.revisions.list(id, limit)).map(revisionJson) };
      },
    );
    r.post(
      `${t.path}/rule-revisions/rollback`,
      {
        onRequest: auth,
        schema: {
          operationId: `rollback${t.op}Rule`,
          hide,
          tags,
          security,
          ...OPEN,
          summary: `Put back ${t.what} as revision \`revision\` held them: a new revision equal to it (404 for an unknown revision)`,
          params: t.params,
          body: RollbackBody,
          response: { 200: RevisionSchema, ...stdErrors(403) },
        },
      },
      async (req) => rollback(req, await t.owned(req, 'manage'), (req.body as { revision: number }).revision),
    );
  }
}
