import { AppError, notFound } from '../../domain/errors.js';
import type { Role } from '../../domain/types.js';
import type { ApiDeps } from '../deps.js';
import type { NewAccount } from '../../store/repos/accounts.js';
import type { Account } from '../../domain/account.js';

/**
 * Last step of every connection flow: store the account with its sealed credentials and put it in the
 * chosen copier group. Refuses a second Master in a group, and an account already connected by this user.
 */
export async function storeConnectedAccount(deps: ApiDeps, a: Omit<NewAccount, 'role' | 'groupId' | 'credentialsEnc'> & { role?: Role; groupId?: string | null; credentials: Record<string, unknown> }): Promise<Account> {
  const role = a.role ?? 'slave';
  if (a.groupId) {
    const g = await deps.store.accounts.groupView(a.userId, a.groupId);
    if (!g) throw notFound('copier group');
    if (role === 'master' && g.master) throw new AppError('conflict', `group ${a.groupId} already has a Master (${g.master.id})`);
  }
  const existing = (await deps.store.accounts.list(a.userId, { platform: a.platform })).find((x) => x.brokerAccountId === a.brokerAccountId && x.environment === (a.environment ?? null));
  if (existing) throw new AppError('conflict', `this broker account is already connected as ${existing.id}`);
  const { credentials, ...rest } = a;
  return deps.store.accounts.create({ ...rest, role, groupId: a.groupId ?? null, credentialsEnc: deps.box.seal(credentials) });
}
