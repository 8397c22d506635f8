import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { withDefaults, type CopyRule } from '../../domain/copy-rule.js';
import { refuseUnworkableRule } from './rule-problems.js';
import { AppError, invalid, notFound } from '../../domain/errors.js';
import type { GroupView } from '../../store/repos/accounts.js';
import type { Account } from '../../domain/account.js';
import { ownedAccount, reqGroup, type ApiDeps } from '../deps.js';
import { userOf, whoOf } from '../plugins/auth.js';
import { AccountIdParams, AccountSchema, OPEN, stdErrors, toAccountJson } from '../schemas.js';
import type { RouteOpts } from './route-opts.js';
import { refuseCopyCycle } from './copy-cycle.js';
import { copyRuleIn, CopyRulePatch, CopyRuleSchema, toCopyRuleJson } from './copy-rule-schema.js';
import { openCopies } from './open-copies.js';
import { enforceQuota, QUOTA_NOTE } from '../quotas.js';
import { finishPage, NextCursor, pageQuery, readPage } from '../paging.js';
import { GROUPS_PAGE } from '../page-specs.js';

const GroupSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    createdAt: Type.String(),
    master: Type.Union([AccountSchema, Type.Null()]),
    slaves: Type.Array(Type.Intersect([AccountSchema, Type.Object({ rule: CopyRuleSchema })])),
  },
  OPEN,
);
const GroupParams = Type.Object({ group_id: Type.String({ minLength: 1, maxLength: 64 }) });

const toGroupJson = (g: GroupView) => ({
  id: g.id,
  name: g.name,
  createdAt: g.createdAt.toISOString(),
  master: g.master ? toAccountJson(g.master) : null,
  slaves: g.slaves.map((s) => ({ ...toAccountJson(s), rule: toCopyRuleJson(s.rule) })),
});

export async function groupRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;
  const tags = ['Copier groups'];

  r.get(
    `${prefix}/copier-groups`,
    {
      onRequest: auth,
      schema: {
        operationId: 'listCopierGroups',
        hide,
        tags,
        security,
        ...OPEN,
        summary: "The caller's copier groups with their Master and Slaves",
        querystring: Type.Object(pageQuery(GROUPS_PAGE), { additionalProperties: false }),
        response: { 200: Type.Object({ groups: Type.Array(GroupSchema), nextCursor: NextCursor }), ...stdErrors() },
      },
    },
    async (req, reply) => {
      const page = readPage(req.query, GROUPS_PAGE);
      const rows = await deps.store.accounts.listGroups(userOf(req), { after: page.after, limit: page.limit + 1 });
      const { items, nextCursor } = finishPage(req, reply, rows, page, GROUPS_PAGE, (g) => g.id);
      return { groups: items.map(toGroupJson), nextCursor };
    },
  );

  r.post(
    `${prefix}/copier-groups`,
    {
      onRequest: auth,
      schema: {
        operationId: 'createCopierGroup',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'Create an empty copier group',
        description: QUOTA_NOTE('copierGroups', 'COPIER_GROUPS'),
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
        response: { 201: GroupSchema, ...stdErrors(409) },
      },
    },
    async (req, reply) => {
      enforceQuota(deps.quotas, 'copierGroups', await deps.store.accounts.countGroups(userOf(req)));
      const g = await deps.store.accounts.createGroup(userOf(req), req.body.name);
      reply.code(201);
      return toGroupJson((await deps.store.accounts.groupView(userOf(req), g.id))!);
    },
  );

  r.get(
    `${prefix}/copier-groups/:group_id`,
    {
      onRequest: auth,
      schema: {
        operationId: 'getCopierGroup',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'One owned copier group with its Master, Slaves and copy rules',
        params: GroupParams,
        response: { 200: GroupSchema, ...stdErrors() },
      },
    },
    async (req) => {
      const { ownerId } = await reqGroup(deps, req, req.params.group_id, 'read');
      const g = await deps.store.accounts.groupView(ownerId, req.params.group_id);
      if (!g) throw notFound('copier group');
      return toGroupJson(g);
    },
  );

  r.put(
    `${prefix}/accounts/:account_id/assignment`,
    {
      onRequest: auth,
      schema: {
        operationId: 'assignAccount',
        hide,
        tags,
        security,
        ...OPEN,
        summary:
          'Put an account in a copier group as its Master or a Slave (groupId null takes it out); 409 copy_cycle when copying would feed on itself, 409 account_not_connected when its connection test failed (status unverified)',
        params: AccountIdParams,
        body: Type.Object(
          {
            groupId: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()]),
            role: Type.Union([Type.Literal('master'), Type.Literal('slave')]),
          },
          { additionalProperties: false },
        ),
        response: { 200: AccountSchema, ...stdErrors(403, 409) },
      },
    },
    async (req) => {
      const account = await ownedAccount(deps, req, req.params.account_id, 'manage');
      const { groupId, role } = req.body;
      // An account whose connection test failed copies nothing: it is not put anywhere until a test passes.
      if (groupId && account.status === 'unverified')
        throw new AppError(
          'account_not_connected',
          `account ${account.id} cannot be assigned: ${account.statusReason ?? 'its connection test failed'}; run the connection test again (POST /v1/accounts/${account.id}/connection-test) once the broker allows it`,
        );
      if (groupId) {
        // The group must be one the caller manages, of the account's own owner (a group holds one owner's accounts).
        const target = await reqGroup(deps, req, groupId, 'manage');
        const g =
          target.ownerId === account.userId ? await deps.store.accounts.groupView(target.ownerId, groupId) : null;
        if (!g) throw notFound('copier group');
        if (role === 'master' && g.master && g.master.id !== account.id)
          throw new AppError('conflict', `group ${groupId} already has a Master (${g.master.id}); move it out first`);
        await refuseCopyCycle(deps, account, role, groupId);
      }
      await deps.store.accounts.setRoleAndGroup(account.id, role, groupId);
      return toAccountJson((await deps.store.accounts.byId(account.id))!);
    },
  );

  r.put(
    `${prefix}/accounts/:account_id/copy-rule`,
    {
      onRequest: auth,
      schema: {
        operationId: 'updateCopyRule',
        hide,
        tags,
        security,
        ...OPEN,
        summary:
          "Set a Slave's copy rule (fields left out keep their defaults); checked against the Slave adapter's capabilities",
        params: AccountIdParams,
        body: CopyRulePatch,
        response: { 200: CopyRuleSchema, ...stdErrors(403) },
      },
    },
    async (req) => {
      const account = await ownedAccount(deps, req, req.params.account_id, 'manage');
      if (account.role !== 'slave')
        throw invalid(`account ${account.id} is a ${account.role}; copy rules belong to Slaves`);
      const rule: CopyRule = withDefaults(copyRuleIn(req.body as Record<string, unknown>));
      await refuseUnworkableRule(deps, account, rule);
      await deps.store.revisions.setRule(whoOf(req, account.userId), account.id, rule);
      return toCopyRuleJson(rule);
    },
  );

  for (const action of ['pause', 'resume'] as const) {
    r.post(
      `${prefix}/accounts/:account_id/${action}`,
      {
        onRequest: auth,
        schema: {
          operationId: `${action}Account`,
          hide,
          tags,
          security,
          ...OPEN,
          summary:
            action === 'pause'
              ? 'Stop copying to/from this account'
              : 'Copy again (also lifts a panic-close lock; 409 panic_close_running while the job runs)',
          params: AccountIdParams,
          response: { 200: AccountSchema, ...stdErrors(403, ...(action === 'resume' ? [409] : [])) },
        },
      },
      async (req) => {
        const account = await ownedAccount(deps, req, req.params.account_id, 'trade');
        if (action === 'resume') await assertResumable(deps, account);
        await setCopying(deps, account, action);
        return toAccountJson((await deps.store.accounts.byId(account.id))!);
      },
    );
  }

  r.patch(
    `${prefix}/copier-groups/:group_id`,
    {
      onRequest: auth,
      schema: {
        operationId: 'renameCopierGroup',
        hide,
        tags,
        security,
        ...OPEN,
        summary: 'Rename a copier group',
        params: GroupParams,
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
        response: { 200: GroupSchema, ...stdErrors(403) },
      },
    },
    async (req) => {
      const { ownerId: userId } = await reqGroup(deps, req, req.params.group_id, 'manage');
      if (!(await deps.store.accounts.renameGroup(userId, req.params.group_id, req.body.name)))
        throw notFound('copier group');
      return toGroupJson((await deps.store.accounts.groupView(userId, req.params.group_id))!);
    },
  );

  r.delete(
    `${prefix}/copier-groups/:group_id`,
    {
      onRequest: auth,
      schema: {
        operationId: 'deleteCopierGroup',
        hide,
        tags,
        security,
        ...OPEN,
        summary:
          'Delete a copier group; its accounts stay, out of any group. 409 open_copies while copies of its Master are open, unless force=true (they are then left open at the brokers and no longer follow the Master)',
        params: GroupParams,
        querystring: ForceQuery,
        response: { 204: Type.Null(), ...stdErrors(403, 409) },
      },
    },
    async (req, reply) => {
      const { ownerId: userId } = await reqGroup(deps, req, req.params.group_id, 'manage');
      const g = await deps.store.accounts.groupView(userId, req.params.group_id);
      if (!g) throw notFound('copier group');
      if (g.master && req.query.force !== 'true') {
        const open = await deps.store.accounts.openCopies(g.master.id);
        if (open.asMaster > 0)
          throw openCopies(
            `copier group ${g.id} has ${open.asMaster} open ${open.asMaster === 1 ? 'copy' : 'copies'} of its Master's trades; close them first (panic-close the group) or delete with force=true to leave them open at the brokers`,
            { asMaster: open.asMaster, asSlave: 0 },
          );
      }
      await deps.store.accounts.deleteGroup(userId, g.id);
      reply.code(204);
      return null;
    },
  );

  for (const action of ['pause', 'resume'] as const) {
    r.post(
      `${prefix}/copier-groups/:group_id/${action}`,
      {
        onRequest: auth,
        schema: {
          operationId: `${action}CopierGroup`,
          hide,
          tags,
          security,
          ...OPEN,
          summary:
            action === 'pause'
              ? 'Pause every account of the group'
              : 'Resume every account of the group (lifts panic-close locks; 409 panic_close_running while a job runs on one of them; disabled duplicates stay off)',
          params: GroupParams,
          response: { 200: GroupSchema, ...stdErrors(403, ...(action === 'resume' ? [409] : [])) },
        },
      },
      async (req) => {
        const { ownerId: userId } = await reqGroup(deps, req, req.params.group_id, 'trade');
        const g = await deps.store.accounts.groupView(userId, req.params.group_id);
        if (!g) throw notFound('copier group');
        const members = [...(g.master ? [g.master] : []), ...g.slaves];
        // All or nothing: a resume refused for one account changes none.
        if (action === 'resume') for (const m of members) await deps.panic.assertNoRunningJob(m.userId, m.id, 'resume');
        for (const m of members) if (action === 'pause' || m.status !== 'disabled') await setCopying(deps, m, action);
        return toGroupJson((await deps.store.accounts.groupView(userId, g.id))!);
      },
    );
  }
}

const ForceQuery = Type.Object(
  { force: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])) },
  { additionalProperties: false },
);

async function assertResumable(deps: ApiDeps, account: Account): Promise<void> {
  // Copying again while a panic-close still flattens the account would reopen what it closes.
  await deps.panic.assertNoRunningJob(account.userId, account.id, 'resume');
  // A duplicate connection stays off: resuming it would copy the broker account onto itself again.
  if (account.status === 'disabled')
    throw new AppError('account_already_connected', `${account.statusReason ?? 'duplicate connection'}; remove it`);
}

/** Pause or resume one account, with its status event. */
async function setCopying(deps: ApiDeps, account: Account, action: 'pause' | 'resume'): Promise<void> {
  const status = action === 'pause' ? 'paused' : 'connected';
  const reason = action === 'pause' ? 'paused by the user' : 'resumed by the user';
  await deps.store.accounts.setStatus(account.id, status, action === 'pause' ? reason : null);
  if (account.status !== status) {
    await deps.store.events.emit([
      {
        userId: account.userId,
        accountId: account.id,
        type: 'account.status_changed',
        payload: { before: account.status, after: status, reason },
      },
    ]);
  }
}
