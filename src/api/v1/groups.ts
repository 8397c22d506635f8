import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { validateRule, withDefaults, type CopyRule } from '../../domain/copy-rule.js';
import { AppError, invalid, notFound } from '../../domain/errors.js';
import type { GroupView } from '../../store/repos/accounts.js';
import { ownedAccount, type ApiDeps } from '../deps.js';
import { userOf } from '../plugins/auth.js';
import { AccountIdParams, AccountSchema, OPEN, stdErrors, toAccountJson } from '../schemas.js';
import type { RouteOpts } from './route-opts.js';
import { refuseCopyCycle } from './copy-cycle.js';
import { enforceQuota, QUOTA_NOTE } from '../quotas.js';
import { finishPage, NextCursor, pageQuery, readPage } from '../paging.js';
import { GROUPS_PAGE } from '../page-specs.js';

const Dec = Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$', maxLength: 24, description: 'decimal as a string, e.g. "0.5"' });
const Sizing = Type.Union([
  Type.Object({ mode: Type.Literal('multiplier'), multiplier: Dec }, { additionalProperties: false }),
  Type.Object({ mode: Type.Literal('fixed'), volume: Dec }, { additionalProperties: false }),
  Type.Object({ mode: Type.Literal('balance_ratio'), multiplier: Type.Optional(Dec) }, { additionalProperties: false }),
  Type.Object({ mode: Type.Literal('equity_ratio'), multiplier: Type.Optional(Dec) }, { additionalProperties: false }),
  Type.Object({
    mode: Type.Literal('risk_percent'),
    riskPercent: Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$', maxLength: 24, description: "share of the Slave's equity (percent, at most 100) the copy may lose at its stop loss" }),
  }, { additionalProperties: false, description: 'Volume chosen so the copy loses riskPercent % of the Slave equity at its stop; needs a stop loss (else skipped: no_stop_loss)', 'x-open-point': true }),
]);
const Symbols = Type.Array(Type.String({ maxLength: 32 }), { maxItems: 500 });
export const CopyRuleSchema = Type.Object({
  sizing: Sizing,
  minVolume: Type.Union([Dec, Type.Null()]),
  maxVolume: Type.Union([Dec, Type.Null()]),
  symbolMap: Type.Record(Type.String({ maxLength: 32 }), Type.String({ maxLength: 32 })),
  includeSymbols: Symbols,
  excludeSymbols: Symbols,
  reverse: Type.Boolean(),
  copyStopLoss: Type.Boolean(),
  copyTakeProfit: Type.Boolean(),
  copyPendingOrders: Type.Boolean(),
  maxDelayMs: Type.Integer({ minimum: 0, maximum: 86_400_000 }),
  maxSlippage: Type.Union([Dec, Type.Null()], {
    description: "Market copies: skip (slippage_exceeded) when the Slave's price for the copy's side is worse than the Master's fill by more than this, "
      + 'in price units of the Slave symbol (e.g. "0.0005"); null = off. Needs a platform that gives quotes.',
    'x-open-point': true,
  }),
}, { ...OPEN, additionalProperties: false });
const CopyRulePatch = Type.Partial(CopyRuleSchema, { additionalProperties: false });

const GroupSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  createdAt: Type.String(),
  master: Type.Union([AccountSchema, Type.Null()]),
  slaves: Type.Array(Type.Intersect([AccountSchema, Type.Object({ rule: CopyRuleSchema })])),
}, OPEN);
const GroupParams = Type.Object({ group_id: Type.String({ minLength: 1, maxLength: 64 }) });

const toGroupJson = (g: GroupView) => ({
  id: g.id, name: g.name, createdAt: g.createdAt.toISOString(),
  master: g.master ? toAccountJson(g.master) : null,
  slaves: g.slaves.map((s) => ({ ...toAccountJson(s), rule: s.rule })),
});

export async function groupRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;
  const tags = ['Copier groups'];

  r.get(`${prefix}/copier-groups`, {
    onRequest: auth,
    schema: { operationId: 'listCopierGroups', hide, tags, security, ...OPEN, summary: "The caller's copier groups with their Master and Slaves", querystring: Type.Object(pageQuery(GROUPS_PAGE), { additionalProperties: false }), response: { 200: Type.Object({ groups: Type.Array(GroupSchema), nextCursor: NextCursor }), ...stdErrors() } },
  }, async (req, reply) => {
    const page = readPage(req.query, GROUPS_PAGE);
    const rows = await deps.store.accounts.listGroups(userOf(req), { after: page.after, limit: page.limit + 1 });
    const { items, nextCursor } = finishPage(req, reply, rows, page, GROUPS_PAGE, (g) => g.id);
    return { groups: items.map(toGroupJson), nextCursor };
  });

  r.post(`${prefix}/copier-groups`, {
    onRequest: auth,
    schema: { operationId: 'createCopierGroup', hide, tags, security, ...OPEN, description: QUOTA_NOTE('copierGroups', 'COPIER_GROUPS'), body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }), response: { 201: GroupSchema, ...stdErrors(409) } },
  }, async (req, reply) => {
    enforceQuota(deps.quotas, 'copierGroups', await deps.store.accounts.countGroups(userOf(req)));
    const g = await deps.store.accounts.createGroup(userOf(req), req.body.name);
    reply.code(201);
    return toGroupJson((await deps.store.accounts.groupView(userOf(req), g.id))!);
  });

  r.get(`${prefix}/copier-groups/:group_id`, {
    onRequest: auth,
    schema: { operationId: 'getCopierGroup', hide, tags, security, ...OPEN, params: GroupParams, response: { 200: GroupSchema, ...stdErrors() } },
  }, async (req) => {
    const g = await deps.store.accounts.groupView(userOf(req), req.params.group_id);
    if (!g) throw notFound('copier group');
    return toGroupJson(g);
  });

  r.put(`${prefix}/accounts/:account_id/assignment`, {
    onRequest: auth,
    schema: {
      operationId: 'assignAccount', hide, tags, security, ...OPEN, summary: 'Put an account in a copier group as its Master or a Slave (groupId null takes it out); 409 copy_cycle when copying would feed on itself',
      params: AccountIdParams,
      body: Type.Object({ groupId: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()]), role: Type.Union([Type.Literal('master'), Type.Literal('slave')]) }, { additionalProperties: false }),
      response: { 200: AccountSchema, ...stdErrors(409) },
    },
  }, async (req) => {
    const userId = userOf(req);
    const account = await ownedAccount(deps, userId, req.params.account_id);
    const { groupId, role } = req.body;
    if (groupId) {
      const g = await deps.store.accounts.groupView(userId, groupId);
      if (!g) throw notFound('copier group');
      if (role === 'master' && g.master && g.master.id !== account.id) throw new AppError('conflict', `group ${groupId} already has a Master (${g.master.id}); move it out first`);
      await refuseCopyCycle(deps, account, role, groupId);
    }
    await deps.store.accounts.setRoleAndGroup(account.id, role, groupId);
    return toAccountJson((await deps.store.accounts.byId(account.id))!);
  });

  r.put(`${prefix}/accounts/:account_id/copy-rule`, {
    onRequest: auth,
    schema: {
      operationId: 'updateCopyRule', hide, tags, security, ...OPEN, summary: "Set a Slave's copy rule (fields left out keep their defaults); checked against the Slave adapter's capabilities",
      params: AccountIdParams, body: CopyRulePatch, response: { 200: CopyRuleSchema, ...stdErrors() },
    },
  }, async (req) => {
    const account = await ownedAccount(deps, userOf(req), req.params.account_id);
    if (account.role !== 'slave') throw invalid(`account ${account.id} is a ${account.role}; copy rules belong to Slaves`);
    const rule: CopyRule = withDefaults(req.body as Partial<CopyRule>);
    const problems = validateRule(rule, deps.adapters.capabilities(account.platform));
    if (problems.length > 0) throw invalid(`the copy rule cannot work: ${problems.join('; ')}`, { problems });
    await deps.store.accounts.setRule(account.id, rule);
    return rule;
  });

  for (const [action, status] of [['pause', 'paused'], ['resume', 'connected']] as const) {
    r.post(`${prefix}/accounts/:account_id/${action}`, {
      onRequest: auth,
      schema: { operationId: `${action}Account`, hide, tags, security, ...OPEN, summary: action === 'pause' ? 'Stop copying to/from this account' : 'Copy again (also lifts a panic-close lock; 409 panic_close_running while the job runs)', params: AccountIdParams, response: { 200: AccountSchema, ...stdErrors(...(action === 'resume' ? [409] : [])) } },
    }, async (req) => {
      const account = await ownedAccount(deps, userOf(req), req.params.account_id);
      // Copying again while a panic-close still flattens the account would reopen what it closes.
      if (action === 'resume') await deps.panic.assertNoRunningJob(account.userId, account.id, 'resume');
      // A duplicate connection stays off: resuming it would copy the broker account onto itself again.
      if (action === 'resume' && account.status === 'disabled') throw new AppError('account_already_connected', `${account.statusReason ?? 'duplicate connection'}; remove it`);
      const reason = action === 'pause' ? 'paused by the user' : 'resumed by the user';
      await deps.store.accounts.setStatus(account.id, status, action === 'pause' ? reason : null);
      if (account.status !== status) {
        await deps.store.events.emit([{ userId: account.userId, accountId: account.id, type: 'account.status_changed', payload: { before: account.status, after: status, reason } }]);
      }
      return toAccountJson((await deps.store.accounts.byId(account.id))!);
    });
  }
}
