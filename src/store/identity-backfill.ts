import { brokerIdentity } from '../domain/broker-identity.js';
import type { Store } from './store.js';

export interface BackfillResult {
  claimed: string[];
  disabled: string[];
  unreadable: string[];
}

/**
 * Gives the platform A rows from before migration 0004 their broker identity. Their MetaTrader server is only
 * in the sealed credentials, which SQL cannot open; this runs on start, before any request, oldest first, so
 * the oldest connection of a login keeps it and later duplicates are disabled like the migration does.
 */
export async function backfillIdentities(
  store: Store,
  open: (sealed: string) => Record<string, unknown>,
): Promise<BackfillResult> {
  const out: BackfillResult = { claimed: [], disabled: [], unreadable: [] };
  for (const a of await store.accounts.withoutIdentity()) {
    let identity: string | null = null;
    try {
      const sealed = await store.accounts.credentialsEnc(a.id);
      const c = sealed ? open(sealed) : {};
      const server = typeof c.server === 'string' ? c.server : null;
      const login = typeof c.login === 'string' ? c.login : a.brokerAccountNumber;
      if (a.platform === 'platforma' && server)
        identity = brokerIdentity({ platform: 'platforma', server, accountId: login });
      else if (a.platform !== 'platforma')
        identity = brokerIdentity({
          platform: a.platform,
          environment: a.environment,
          server: a.brokerName,
          accountId: a.brokerAccountId,
        });
    } catch {
      identity = null;
    }
    // Left as is (still copying) rather than guessed: the connect flows' check covers it from the next connect on.
    if (!identity) {
      out.unreadable.push(a.id);
      continue;
    }
    ((await store.accounts.claimIdentity(a.id, identity)) ? out.claimed : out.disabled).push(a.id);
  }
  return out;
}
