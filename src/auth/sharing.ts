import { AppError, invalid, notFound } from '../domain/errors.js';
import { isRole, ROLES, type ResourceKind } from '../domain/people/roles.js';
import type { GrantRow } from '../store/repos/access-grants.js';
import type { Store } from '../store/store.js';
import { accountFor, groupFor } from './access.js';

/** What an owner passes to name the user a role goes to: an email address or a user id. */
export type UserRef = string;

/**
 * Granting and revoking roles on an account or a copier group (docs/people.md). Only a caller whose role allows
 * `manage` (an owner) may do either; the resource is resolved by the access decision (src/auth/access.ts), so an
 * id the caller cannot see is the same 404 as an unknown one.
 */
export class SharingService {
  constructor(private readonly store: Store) {}

  /** The resource as the caller may manage it, and its owner's user id. */
  private async managed(callerId: string, kind: ResourceKind, id: string): Promise<{ ownerId: string }> {
    if (kind === 'account') return { ownerId: (await accountFor(this.store, callerId, id, 'manage')).userId };
    return { ownerId: (await groupFor(this.store, callerId, id, 'manage')).ownerId };
  }

  private async user(ref: UserRef): Promise<{ id: string; email: string }> {
    const u = ref.includes('@') ? await this.store.users.byEmail(ref) : await this.store.users.byId(ref);
    if (!u) throw new AppError('not_found', `no user ${ref}: they sign up (or the operator creates them) first`);
    return u;
  }

  async grant(callerId: string, kind: ResourceKind, id: string, ref: UserRef, role: unknown): Promise<GrantRow> {
    if (!isRole(role)) throw invalid(`role must be one of ${ROLES.join(', ')}`, { field: 'role' });
    const { ownerId } = await this.managed(callerId, kind, id);
    const u = await this.user(ref);
    if (u.id === ownerId) throw invalid(`${ref} owns this ${kind} already`, { field: 'user' });
    if (u.id === callerId) throw invalid('you cannot change your own role', { field: 'user' });
    return this.store.grants.upsert({ ownerUserId: ownerId, userId: u.id, resourceKind: kind, resourceId: id, role });
  }

  async revoke(callerId: string, kind: ResourceKind, id: string, ref: UserRef): Promise<void> {
    await this.managed(callerId, kind, id);
    const u = await this.user(ref).catch(() => null);
    if (!u || !(await this.store.grants.revoke(kind, id, u.id))) throw notFound('grant');
  }

  async list(callerId: string, kind: ResourceKind, id: string): Promise<GrantRow[]> {
    await this.managed(callerId, kind, id);
    return this.store.grants.ofResource(kind, id);
  }

  /** Accounts and groups other users shared with this one, with the role and a name to show. */
  async sharedWith(userId: string): Promise<Array<GrantRow & { name: string; ownerEmail: string }>> {
    const grants = await this.store.grants.sharedWith(userId);
    const out: Array<GrantRow & { name: string; ownerEmail: string }> = [];
    for (const g of grants) {
      const owner = await this.store.users.byId(g.ownerUserId);
      const name =
        g.resourceKind === 'account'
          ? await this.store.accounts.byId(g.resourceId).then((a) => (a && !a.removedAt ? a.name : null))
          : await this.store.accounts.ownedGroup(g.ownerUserId, g.resourceId).then((x) => x?.name ?? null);
      // A grant on something removed since shows nothing: every route answers 404 for it anyway.
      if (name !== null) out.push({ ...g, name, ownerEmail: owner?.email ?? '' });
    }
    return out;
  }
}
