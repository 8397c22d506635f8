/**
 * Roles a user holds on an account or a copier group (docs/people.md). The account's or group's creator is its
 * owner without a grant; other users hold what an owner granted them.
 */
export const ROLES = ['owner', 'trader', 'read_only'] as const;
export type Role = (typeof ROLES)[number];

export type ResourceKind = 'account' | 'group';

/**
 * What a request needs: `read` (positions, history, reports, the account's own view), `trade` (orders, closing
 * and changing positions, a panic-close, pause and resume) or `manage` (copy rules, risk limits, membership,
 * removal, connection settings, sharing).
 */
export type Need = 'read' | 'trade' | 'manage';

const ALLOWED: Record<Role, ReadonlySet<Need>> = {
  owner: new Set(['read', 'trade', 'manage']),
  trader: new Set(['read', 'trade']),
  read_only: new Set(['read']),
};

export const allows = (role: Role, need: Need): boolean => ALLOWED[role].has(need);

const RANK: Record<Role, number> = { read_only: 0, trader: 1, owner: 2 };

/** The stronger of two roles (a user may hold one on an account and another on its group). */
export const stronger = (a: Role | null, b: Role | null): Role | null =>
  a === null ? b : b === null ? a : RANK[a] >= RANK[b] ? a : b;

export const isRole = (v: unknown): v is Role => typeof v === 'string' && (ROLES as readonly string[]).includes(v);
