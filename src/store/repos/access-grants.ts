import { and, asc, eq, or } from 'drizzle-orm';
import type { Db } from '../db.js';
import { accessGrants, copierGroups, users } from '../schema.js';
import { newId } from '../../domain/ids.js';
import type { ResourceKind, Role } from '../../domain/people/roles.js';

export interface GrantRow {
  id: string;
  ownerUserId: string;
  userId: string;
  /** The grantee's email (lists show it). */
  email: string;
  resourceKind: ResourceKind;
  resourceId: string;
  role: Role;
  createdAt: Date;
}

const COLS = {
  id: accessGrants.id,
  ownerUserId: accessGrants.ownerUserId,
  userId: accessGrants.userId,
  email: users.email,
  resourceKind: accessGrants.resourceKind,
  resourceId: accessGrants.resourceId,
  role: accessGrants.role,
  createdAt: accessGrants.createdAt,
};

/** Roles granted to other users on accounts and copier groups. */
export class AccessGrantsRepo {
  constructor(private readonly db: Db) {}

  /** The caller's grants on any of the resources (an account and its group, looked up in one query). */
  async rolesOf(userId: string, resources: Array<{ kind: ResourceKind; id: string }>): Promise<GrantRow[]> {
    if (resources.length === 0) return [];
    const rows = await this.db
      .select(COLS)
      .from(accessGrants)
      .innerJoin(users, eq(users.id, accessGrants.userId))
      .where(
        and(
          eq(accessGrants.userId, userId),
          or(...resources.map((r) => and(eq(accessGrants.resourceKind, r.kind), eq(accessGrants.resourceId, r.id)))),
        ),
      );
    return rows as GrantRow[];
  }

  /** One grant per user and resource: a second grant replaces the role. */
  async upsert(g: {
    ownerUserId: string;
    userId: string;
    resourceKind: ResourceKind;
    resourceId: string;
    role: Role;
  }): Promise<GrantRow> {
    await this.db
      .insert(accessGrants)
      .values({ id: newId('agr'), ...g })
      .onConflictDoUpdate({
        target: [accessGrants.userId, accessGrants.resourceKind, accessGrants.resourceId],
        set: { role: g.role },
      });
    const [row] = await this.rolesOf(g.userId, [{ kind: g.resourceKind, id: g.resourceId }]);
    return row!;
  }

  async revoke(kind: ResourceKind, resourceId: string, userId: string): Promise<boolean> {
    const rows = await this.db
      .delete(accessGrants)
      .where(
        and(
          eq(accessGrants.resourceKind, kind),
          eq(accessGrants.resourceId, resourceId),
          eq(accessGrants.userId, userId),
        ),
      )
      .returning({ id: accessGrants.id });
    return rows.length > 0;
  }

  /** Who holds a role on one resource, oldest grant first. */
  async ofResource(kind: ResourceKind, resourceId: string): Promise<GrantRow[]> {
    const rows = await this.db
      .select(COLS)
      .from(accessGrants)
      .innerJoin(users, eq(users.id, accessGrants.userId))
      .where(and(eq(accessGrants.resourceKind, kind), eq(accessGrants.resourceId, resourceId)))
      .orderBy(asc(accessGrants.createdAt), asc(accessGrants.id));
    return rows as GrantRow[];
  }

  /** Everything shared with a user, oldest grant first. */
  async sharedWith(userId: string): Promise<GrantRow[]> {
    const rows = await this.db
      .select(COLS)
      .from(accessGrants)
      .innerJoin(users, eq(users.id, accessGrants.userId))
      .where(eq(accessGrants.userId, userId))
      .orderBy(asc(accessGrants.createdAt), asc(accessGrants.id));
    return rows as GrantRow[];
  }

  /** A copier group's owner, whoever asks (the access decision needs it before it knows the caller's role). */
  async groupOwner(groupId: string): Promise<string | null> {
    const [g] = await this.db
      .select({ userId: copierGroups.userId })
      .from(copierGroups)
      .where(eq(copierGroups.id, groupId))
      .limit(1);
    return g?.userId ?? null;
  }
}
