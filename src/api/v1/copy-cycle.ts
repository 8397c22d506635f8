import type { Account } from '../../domain/account.js';
import { brokerIdentity } from '../../domain/broker-identity.js';
import { cycleThrough, type GraphMember } from '../../domain/copy-graph.js';
import { AppError } from '../../domain/errors.js';
import type { Role } from '../../domain/types.js';
import type { ApiDeps } from '../deps.js';

/**
 * The broker account a row reaches, recomputed from what the row holds rather than read from the unique
 * column: a row written before the column existed, or moved by hand, is still seen for what it is.
 */
function reachedIdentity(a: Account): string | null {
  if (a.platform === 'platforma') return a.brokerIdentity;
  return brokerIdentity({
    platform: a.platform,
    environment: a.environment,
    server: a.brokerName,
    accountId: a.brokerAccountId,
  });
}

/**
 * Refuses an assignment that would let copying feed on itself: a Slave that is the same broker account as
 * its group's Master, or a chain of groups (a Slave of one is the Master of the next, by broker identity)
 * that comes back to where it started. The graph is the whole deployment's, since broker identity is; a
 * group of another user is named only as such. A disabled duplicate connection is never assigned.
 */
export async function refuseCopyCycle(deps: ApiDeps, account: Account, role: Role, groupId: string): Promise<void> {
  if (account.status === 'disabled') {
    throw new AppError(
      'account_already_connected',
      `${account.statusReason ?? 'this is a duplicate connection'}: a disabled duplicate cannot copy; remove it`,
    );
  }
  const all = await deps.store.accounts.all();
  const members: GraphMember[] = all
    .filter((a) => a.id !== account.id && a.groupId && a.status !== 'disabled')
    .map((a) => ({ groupId: a.groupId!, role: a.role, identity: reachedIdentity(a) }));
  members.push({ groupId, role, identity: reachedIdentity(account) });
  const cycle = cycleThrough(members, groupId);
  if (!cycle) return;
  const owners = new Map(all.filter((a) => a.groupId).map((a) => [a.groupId!, a.userId] as const));
  const named = cycle.map((g) => (g === groupId || owners.get(g) === account.userId ? g : "another user's group"));
  throw new AppError(
    'copy_cycle',
    `this assignment closes a copy cycle (${named.join(' -> ')}): copies would be copied back to where they came from`,
    { details: { cycle: named } },
  );
}
