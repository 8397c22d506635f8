import { SharingService } from '../auth/sharing.js';
import { AppError } from '../domain/errors.js';
import type { ResourceKind } from '../domain/people/roles.js';
import type { GrantRow } from '../store/repos/access-grants.js';
import type { Store } from '../store/store.js';

type Args = Record<string, unknown>;
/** An operation of ops.ts's shape (declared here: ops.ts imports this file). */
type PeopleOp = (d: { store: Store }, args: Args) => Promise<unknown>;

const str = (a: Args, name: string): string => {
  const v = a[name];
  if (typeof v !== 'string' || v === '') throw new AppError('invalid_request', `--${name} is required`);
  return v;
};

async function user(store: Store, email: string) {
  const u = await store.users.byEmail(email);
  if (!u) throw new AppError('not_found', `no user with email ${email}`);
  return u;
}

/** `--account <id>` or `--group <id>`, and the owner the operator acts for (the resource's own). */
async function target(store: Store, a: Args): Promise<{ kind: ResourceKind; id: string; ownerId: string }> {
  const account = typeof a.account === 'string' && a.account !== '' ? a.account : null;
  const group = typeof a.group === 'string' && a.group !== '' ? a.group : null;
  if (!account === !group) throw new AppError('invalid_request', 'give one of --account <id> or --group <id>');
  if (account) {
    const acc = await store.accounts.byId(account);
    if (!acc || acc.removedAt) throw new AppError('not_found', `no account ${account}`);
    return { kind: 'account', id: acc.id, ownerId: acc.userId };
  }
  const ownerId = await store.grants.groupOwner(group!);
  if (!ownerId) throw new AppError('not_found', `no copier group ${group}`);
  return { kind: 'group', id: group!, ownerId };
}

const grantJson = (g: GrantRow) => ({
  userId: g.userId,
  email: g.email,
  role: g.role,
  resourceKind: g.resourceKind,
  resourceId: g.resourceId,
  createdAt: g.createdAt.toISOString(),
});

/**
 * The operator's people commands (docs/people.md) as named operations (see ops.ts): verify a signed-up user by
 * hand, turn off a second factor whose phone and recovery codes are lost, and grant, revoke or list roles on an
 * account or group for its owner (the same decision the API's owners go through: src/auth/sharing.ts).
 */
export const peopleOps: Record<string, PeopleOp> = {
  'users.verify': async ({ store }, a) => {
    const u = await user(store, str(a, 'email'));
    await store.users.markVerified(u.id);
    return { id: u.id, email: u.email, verified: true };
  },
  'users.reset-second-factor': async ({ store }, a) => {
    const u = await user(store, str(a, 'email'));
    await store.secondFactor.disable(u.id);
    return { id: u.id, email: u.email, secondFactor: 'off' };
  },
  'access.grant': async ({ store }, a) => {
    const t = await target(store, a);
    return grantJson(await new SharingService(store).grant(t.ownerId, t.kind, t.id, str(a, 'user'), a.role));
  },
  'access.revoke': async ({ store }, a) => {
    const t = await target(store, a);
    await new SharingService(store).revoke(t.ownerId, t.kind, t.id, str(a, 'user'));
    return { resourceKind: t.kind, resourceId: t.id, user: a.user, revoked: true };
  },
  'access.list': async ({ store }, a) => {
    const t = await target(store, a);
    return (await new SharingService(store).list(t.ownerId, t.kind, t.id)).map(grantJson);
  },
};
