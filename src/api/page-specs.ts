import type { Order, Position } from '../domain/types.js';
import type { PageSpec } from './paging.js';

/** Page sizes of every list route (our numbers: docs/open-points.md, "Paging"). */
export const ACCOUNTS_PAGE: PageSpec = { kind: 'acc', max: 500, dflt: null };
export const ORDERS_PAGE: PageSpec = { kind: 'ord', max: 500, dflt: 100 };
export const POSITIONS_PAGE: PageSpec = { kind: 'pos', max: 500, dflt: 100 };
export const GROUPS_PAGE: PageSpec = { kind: 'grp', max: 200, dflt: 50 };
export const API_KEYS_PAGE: PageSpec = { kind: 'key', max: 200, dflt: 50 };
export const WEBHOOKS_PAGE: PageSpec = { kind: 'whe', max: 200, dflt: 50 };
export const TRADES_PAGE: PageSpec = { kind: 'trd', max: 200, dflt: 50 };
export const LEDGER_PAGE: PageSpec = { kind: 'int', max: 200, dflt: 50 };
export const REQUESTS_PAGE: PageSpec = { kind: 'req', max: 200, dflt: 50 };
export const HISTORY_PAGE: PageSpec = { kind: 'his', max: 500, dflt: 100 };

/** Broker orders, newest first: by creation time, then id (unique per account). */
export const orderKey = (o: Order): string => `${o.createdAt}|${o.id}`;
/** Open positions, oldest first: by opening time, then id (unique per account). */
export const positionKey = (p: Position): string => `${p.openedAt}|${p.id}`;

/** Receipts of one account, in chain order: by sequence number. */
export const RECEIPTS_PAGE: PageSpec = { kind: 'rcp', max: 500, dflt: 100 };
