import { allPages, app, must } from '../api/client';
import type { Account } from '../api/types';
import { rememberNames } from '../lib/names';
import { useQuery } from './useQuery';

/** The signed-in user's accounts on every platform, live; their names stand in for ids in error messages. */
export function useAccounts() {
  return useQuery<Account[]>(
    async () => {
      const { accounts } = await must(app.GET('/v1/accounts'));
      rememberNames(accounts);
      return accounts;
    },
    [],
    { live: true },
  );
}

export const useGroups = () =>
  useQuery(
    async () => {
      const groups = await allPages(async (cursor) => {
        const r = await must(
          app.GET('/v1/copier-groups', { params: { query: { limit: '200', ...(cursor ? { cursor } : {}) } } }),
        );
        return { items: r.groups, nextCursor: r.nextCursor };
      });
      rememberNames(groups);
      return groups;
    },
    [],
    { live: true },
  );
