import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ResourceKind } from '../../domain/people/roles.js';
import { SharingService } from '../../auth/sharing.js';
import type { GrantRow } from '../../store/repos/access-grants.js';
import type { ApiDeps } from '../deps.js';
import { userOf } from '../plugins/auth.js';
import { AccountIdParams, OPEN, stdErrors } from '../schemas.js';
import type { RouteOpts } from './route-opts.js';

const RoleSchema = Type.Union([Type.Literal('owner'), Type.Literal('trader'), Type.Literal('read_only')], {
  description: 'owner: everything; trader: reads and trading; read_only: positions, history, reports',
});
const grantFields = {
  userId: Type.String(),
  email: Type.String(),
  role: RoleSchema,
  resourceKind: Type.Union([Type.Literal('account'), Type.Literal('group')]),
  resourceId: Type.String(),
  createdAt: Type.String(),
};
const GrantSchema = Type.Object(grantFields, {
  ...OPEN,
  description: 'A role another user holds on an account or a copier group (docs/people.md)',
});
const SharedSchema = Type.Object(
  {
    ...grantFields,
    name: Type.String({ description: "the account's or group's name" }),
    ownerEmail: Type.String(),
  },
  OPEN,
);
const GrantBody = Type.Object(
  {
    user: Type.String({ minLength: 1, maxLength: 254, description: 'the email address or user id of who gets it' }),
    role: RoleSchema,
  },
  { additionalProperties: false },
);
const GroupParams = Type.Object({ group_id: Type.String({ minLength: 1, maxLength: 64 }) });
const UserParam = { user_id: Type.String({ minLength: 1, maxLength: 64 }) };

const grantJson = (g: GrantRow) => ({
  userId: g.userId,
  email: g.email,
  role: g.role,
  resourceKind: g.resourceKind,
  resourceId: g.resourceId,
  createdAt: g.createdAt.toISOString(),
});

/** Sharing (docs/people.md): an owner grants and revokes roles on an account or a group; what is shared with me. */
export async function sharingRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;
  const tags = ['Sharing'];
  const sharing = new SharingService(deps.store);
  const targets = [
    { kind: 'account' as ResourceKind, path: `${prefix}/accounts/:account_id`, params: AccountIdParams, op: 'Account' },
    { kind: 'group' as ResourceKind, path: `${prefix}/copier-groups/:group_id`, params: GroupParams, op: 'Group' },
  ];
  const idOf = (p: unknown) => {
    const x = p as { account_id?: string; group_id?: string };
    return (x.account_id ?? x.group_id)!;
  };
  const common = { hide, tags, security, ...OPEN };

  for (const t of targets) {
    r.get(
      `${t.path}/grants`,
      {
        onRequest: auth,
        schema: {
          ...common,
          operationId: `list${t.op}Grants`,
          summary: `Who else holds a role on this ${t.kind} (owners only)`,
          params: t.params,
          response: { 200: Type.Object({ grants: Type.Array(GrantSchema) }), ...stdErrors(403) },
        },
      },
      async (req) => ({ grants: (await sharing.list(userOf(req), t.kind, idOf(req.params))).map(grantJson) }),
    );
    r.post(
      `${t.path}/grants`,
      {
        onRequest: auth,
        schema: {
          ...common,
          operationId: `grant${t.op}Role`,
          summary: `Give another user a role on this ${t.kind} (owners only); a second grant replaces the role`,
          description:
            'A role on a group covers its accounts too. 404 when no user has that email or id (they sign up, or the operator creates them, first).',
          params: t.params,
          body: GrantBody,
          response: { 200: GrantSchema, ...stdErrors(403) },
        },
      },
      async (req) =>
        grantJson(await sharing.grant(userOf(req), t.kind, idOf(req.params), req.body.user, req.body.role)),
    );
    r.delete(
      `${t.path}/grants/:user_id`,
      {
        onRequest: auth,
        schema: {
          ...common,
          operationId: `revoke${t.op}Role`,
          summary: `Take a user's role on this ${t.kind} away (owners only)`,
          params: Type.Object({ ...t.params.properties, ...UserParam }),
          response: { 204: Type.Null(), ...stdErrors(403) },
        },
      },
      async (req, reply) => {
        await sharing.revoke(userOf(req), t.kind, idOf(req.params), (req.params as { user_id: string }).user_id);
        reply.code(204);
        return null;
      },
    );
  }

  r.get(
    `${prefix}/shared-with-me`,
    {
      onRequest: auth,
      schema: {
        ...common,
        operationId: 'listSharedWithMe',
        summary: 'Accounts and copier groups other users shared with the caller, with the role on each',
        response: { 200: Type.Object({ shared: Type.Array(SharedSchema) }), ...stdErrors() },
      },
    },
    async (req) => ({
      shared: (await sharing.sharedWith(userOf(req))).map((g) => ({
        ...grantJson(g),
        name: g.name,
        ownerEmail: g.ownerEmail,
      })),
    }),
  );
}
