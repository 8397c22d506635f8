import type { Platform } from './types.js';

/**
 * The deployment-wide identity of a broker account: platform + environment/server + account number, normalised.
 * Two connections with the same identity are the same money at the broker, so one may never copy from the
 * other: the store keeps it unique (accounts.broker_identity). The SQL backfill of migration 0004 computes
 * the same strings for sim, B and C; keep both in step.
 */
const norm = (s: string | null | undefined) => (s ?? '').trim().toLowerCase().replace(/\s+/g, ' ');

export interface IdentityParts {
  platform: Platform;
  /** demo or live (B, C); ignored for A, whose server names carry it. */
  environment?: string | null;
  /** A: the MetaTrader server; B: the broker server name typed at sign-in; D: the broker's DXtrade server. */
  server?: string | null;
  /** A: the MT login; B: the all-accounts id; C: ctidTraderAccountId; D: the account code; sim: the simulator's account id. */
  accountId: string;
}

export function brokerIdentity(p: IdentityParts): string {
  const id = p.accountId.trim();
  switch (p.platform) {
    case 'sim':
      return `sim:${id}`;
    case 'platforma':
      // A login is unique per MetaTrader server; the same server is one account whether reached as MT4 or MT5.
      if (!p.server) throw new Error('a platform A identity needs the server');
      return `platforma:${norm(p.server)}:${id}`;
    case 'platformb':
      return `platformb:${norm(p.environment) || 'demo'}:${norm(p.server)}:${id}`;
    case 'platformc':
      // ctidTraderAccountId is unique across cTrader brokers; demo and live are separate account spaces.
      return `platformc:${norm(p.environment) || 'demo'}:${id}`;
    case 'platformd':
      // A DXtrade account code is unique on its broker's server; one broker runs demo and live as separate servers.
      if (!p.server) throw new Error('a platform D identity needs the server');
      return `platformd:${norm(p.server)}:${norm(p.environment) || 'demo'}:${id}`;
  }
}
