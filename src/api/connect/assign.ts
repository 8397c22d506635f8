import { AppError, notFound } from '../../domain/errors.js';
import type { Role } from '../../domain/types.js';
import type { ApiDeps } from '../deps.js';
import { alreadyConnected, type NewAccount } from '../../store/repos/accounts.js';
import type { Account } from '../../domain/account.js';
import { enforceQuota } from '../quotas.js';

/**
 * Who holds this broker identity already. Another user: 409 `account_already_connected` (before anything is
 * provisioned upstream). The caller: their connection, which a connect of the same account updates (reconnect).
 */
export async function connectionOf(deps: ApiDeps, userId: string, identity: string): Promise<Account | null> {
  const holder = await deps.store.accounts.byIdentity(identity);
  // A new connection must fit the quota: checked here, before anything is stored.
  if (!holder) {
    enforceQuota(deps.quotas, 'accounts', await deps.store.accounts.countActive(userId));
    return null;
  }
  if (holder.userId !== userId) throw alreadyConnected('by another user');
  return holder;
}

/**
 * Who holds this broker identity, without refusing yet: for a flow that proves the caller's credentials only by
 * using them (platform A, where MetaApi has no verify-only call), the 409 for another user's login must come
 * after that proof, or its answer to a wrong password would tell who connected what (issue 46). A connection
 * that is not the caller's must fit the caller's quota, whoever holds it, so the quota answer tells nothing
 * either. The caller refuses another user's holder (`alreadyConnected`) once the credentials are proven.
 */
export async function holderAfterProof(deps: ApiDeps, userId: string, identity: string): Promise<Account | null> {
  const holder = await deps.store.accounts.byIdentity(identity);
  if (!holder || holder.userId !== userId)
    enforceQuota(deps.quotas, 'accounts', await deps.store.accounts.countActive(userId));
  return holder;
}

export interface Connected {
  account: Account;
  reconnected: boolean;
  /** Where a new account goes once its connection test passes (it is stored unassigned); null on a reconnect. */
  place: { groupId: string | null; role: Role } | null;
}

/**
 * Last step of every connection flow: store the account with its sealed credentials, unassigned: the caller
 * puts it in the chosen copier group once its connection test passed (testAndPlace). Refuses a second Master in
 * that group now, before anything is stored. The same broker account connected again by its
 * owner is a reconnect: the existing connection gets the new broker link and credentials (its group, role
 * and rules stay); by anyone else it is refused, and the unique index refuses it too if two race.
 */
export async function storeConnectedAccount(
  deps: ApiDeps,
  a: Omit<NewAccount, 'role' | 'groupId' | 'credentialsEnc' | 'brokerIdentity'> & {
    brokerIdentity: string;
    role?: Role;
    groupId?: string | null;
    credentials: Record<string, unknown>;
  },
): Promise<Connected> {
  const existing = await connectionOf(deps, a.userId, a.brokerIdentity);
  if (existing) {
    await deps.store.accounts.reconnect(existing.id, {
      brokerAccountId: a.brokerAccountId,
      credentialsEnc: deps.box.seal(a.credentials),
      brokerName: a.brokerName ?? null,
      currency: a.currency ?? null,
    });
    // The cached adapter holds the old link and credentials.
    await deps.adapters.evict(existing.id);
    return { account: (await deps.store.accounts.byId(existing.id))!, reconnected: true, place: null };
  }
  const role = a.role ?? 'slave';
  if (a.groupId) {
    const g = await deps.store.accounts.groupView(a.userId, a.groupId);
    if (!g) throw notFound('copier group');
    if (role === 'master' && g.master)
      throw new AppError('conflict', `group ${a.groupId} already has a Master (${g.master.id})`);
  }
  const { credentials, ...rest } = a;
  const account = await deps.store.accounts.create({
    ...rest,
    role,
    groupId: null,
    credentialsEnc: deps.box.seal(credentials),
  });
  return { account, reconnected: false, place: { groupId: a.groupId ?? null, role } };
}
