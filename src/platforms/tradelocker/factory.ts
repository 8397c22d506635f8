import { AppError } from '../../domain/errors.js';
import type { AdapterFactory, BrokerAdapter } from '../adapter.js';
import { TradeLockerAdapter } from './adapter.js';
import { TRADELOCKER_CAPABILITIES } from './capabilities.js';

/**
 * Stored `credentials` of a platform B account (encrypted at rest by the store):
 *
 *   { email: string, password: string, server: string, accNum: number, accountId: string }
 *
 * - email, password, server: what the user typed at connect time (server = the broker's server name).
 * - accountId: all-accounts `id` (path segment, and the number after `#` in the TradeLocker UI).
 *   Falls back to the account row's `brokerAccountId` when absent.
 * - accNum: all-accounts `accNum` (the header); a numeric string is accepted.
 * The environment ('demo' | 'live') is the account row's `environment`, turned into a base URL by
 * `resolveBaseUrl`, so tests and demo mode point it at the simulator.
 */
export interface TradeLockerCredentials {
  email: string;
  password: string;
  server: string;
  accNum: number;
  accountId: string;
}

export function parseTradeLockerCredentials(
  raw: Record<string, unknown> | null,
  brokerAccountId: string,
): TradeLockerCredentials {
  const c = raw ?? {};
  const str = (k: string) => (typeof c[k] === 'string' && (c[k] as string).length > 0 ? (c[k] as string) : null);
  const email = str('email');
  const password = str('password');
  const server = str('server');
  const accountId =
    str('accountId') ?? (typeof c.accountId === 'number' ? String(c.accountId) : brokerAccountId || null);
  const accNum =
    typeof c.accNum === 'number'
      ? c.accNum
      : typeof c.accNum === 'string' && /^\d+$/.test(c.accNum)
        ? Number(c.accNum)
        : NaN;
  const missing = [
    !email && 'email',
    !password && 'password',
    !server && 'server',
    !accountId && 'accountId',
    !(accNum > 0) && 'accNum',
  ].filter(Boolean);
  if (missing.length > 0) throw new AppError('invalid_request', `TradeLocker credentials lack ${missing.join(', ')}`);
  return { email: email!, password: password!, server: server!, accNum, accountId: accountId! };
}

export function createTradeLockerAdapterFactory(opts: {
  resolveBaseUrl(environment: string | null): string;
  timeoutMs?: number;
  pollIntervalMs?: number;
  fetch?: typeof fetch;
}): AdapterFactory {
  return {
    platform: 'platformb',
    capabilities: TRADELOCKER_CAPABILITIES,
    async create(account): Promise<BrokerAdapter> {
      const creds = parseTradeLockerCredentials(account.credentials, account.brokerAccountId);
      // Lazy: the first call signs in, so a broker that is down at start-up does not stop the service.
      return new TradeLockerAdapter({
        baseUrl: opts.resolveBaseUrl(account.environment),
        ...creds,
        ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
        ...(opts.pollIntervalMs !== undefined ? { pollIntervalMs: opts.pollIntervalMs } : {}),
        ...(opts.fetch ? { fetch: opts.fetch } : {}),
      });
    },
  };
}
