import type { Account } from '../domain/account.js';
import { AppError, notFound } from '../domain/errors.js';
import { allows, stronger, type Need, type Role } from '../domain/people/roles.js';
import type { Platform } from '../domain/types.js';
import type { Store } from '../store/store.js';

/**
 * The one place that decides who may do what with an account or a copier group (docs/people.md).
 *
 * The creator is the owner. Anyone else holds the stronger of the roles granted on the account and on its group.
 * No role: the same 404 as an unknown id, so nobody learns what exists. A role that does not allow the request:
 * 403 forbidden, since the caller already sees the thing. Routes then act with the owner's user id (`a.userId`),
 * whoever the caller is: the account's data, events and limits stay the owner's.
 */
export async function roleOnAccount(store: Store, userId: string, a: Account): Promise<Role | null> {
  if (a.userId === userId) return 'owner';
  const grants = await store.grants.rolesOf(userId, [
    { kind: 'account', id: a.id },
    ...(a.groupId ? [{ kind: 'group' as const, id: a.groupId }] : []),
  ]);
  return grants.reduce<Role | null>((r, g) => stronger(r, g.role), null);
}

const refuse = (what: string, role: Role, need: Need): AppError =>
  new AppError('forbidden', `your role on this ${what} (${role}) does not allow this (${need})`, {
    details: { role, need },
  });

/** A live account the caller may `need`; `platform` narrows it (another platform's id is the same 404). */
export async function accountFor(
  store: Store,
  userId: string,
  id: string,
  need: Need,
  platform?: Platform,
): Promise<Account> {
  // The owner's own list first: the common case, and on the embedded store a read of its cache.
  const own = await store.accounts.owned(userId, id);
  const a = own ?? (await sharedAccount(store, id));
  if (!a || (platform && a.platform !== platform)) throw notFound('account');
  if (own) return own;
  const role = await roleOnAccount(store, userId, a);
  if (!role) throw notFound('account');
  if (!allows(role, need)) throw refuse('account', role, need);
  return a;
}

async function sharedAccount(store: Store, id: string): Promise<Account | null> {
  const a = await store.accounts.byId(id);
  return a && !a.removedAt ? a : null;
}

/** A copier group the caller may `need`: its id, its owner (whose user id the store reads it by) and the role. */
export async function groupFor(
  store: Store,
  userId: string,
  id: string,
  need: Need,
): Promise<{ id: string; ownerId: string; role: Role }> {
  const ownerId = await store.grants.groupOwner(id);
  if (!ownerId) throw notFound('copier group');
  if (ownerId === userId) return { id, ownerId, role: 'owner' };
  const [g] = await store.grants.rolesOf(userId, [{ kind: 'group', id }]);
  if (!g) throw notFound('copier group');
  if (!allows(g.role, need)) throw refuse('copier group', g.role, need);
  return { id, ownerId, role: g.role };
}
