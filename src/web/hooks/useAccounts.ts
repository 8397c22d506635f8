import { allPages, app, must } from '../api/client';
import type { Account } from '../api/types';
import { recordEquity } from '../lib/equity-history';
import { useQuery } from './useQuery';

/** The signed-in user's accounts on every platform, live; each answer also feeds the equity chart. */
export function useAccounts() {
  return useQuery<Account[]>(async () => {
    const { accounts } = await must(app.GET('/v1/accounts'));
    recordEquity(accounts);
    return accounts;
  }, [], { live: true });
}

export const useGroups = () => useQuery(() => allPages(async (cursor) => {
  const r = await must(app.GET('/v1/copier-groups', { params: { query: { limit: '200', ...(cursor ? { cursor } : {}) } } }));
  return { items: r.groups, nextCursor: r.nextCursor };
}), [], { live: true });
