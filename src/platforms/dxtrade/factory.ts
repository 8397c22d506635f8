import { AppError } from '../../domain/errors.js';
import type { AdapterFactory, BrokerAdapter } from '../adapter.js';
import { guardCapabilities } from '../capability-guard.js';
import { DxTradeAdapter } from './adapter.js';
import { dxCapabilities } from './capabilities.js';

/**
 * Stored `credentials` of a platform D account (encrypted at rest by the store):
 *
 *   { username: string, domain: string, password: string, server: string, account: string, hedging?: boolean }
 *
 * - username, domain, password: the DXtrade login (the spec's POST /login body).
 * - server: the broker's DXtrade address the user typed; the REST base is `<server>/dxsca-web`.
 * - account: the account code (Account Details `account`); falls back to the row's brokerAccountId.
 * - hedging: Account Details `isPositionBased` as read at connect time (the first read confirms it).
 */
export interface DxCredentials {
  username: string;
  domain: string;
  password: string;
  server: string;
  account: string;
  hedging?: boolean;
}

export function parseDxCredentials(raw: Record<string, unknown> | null, brokerAccountId: string): DxCredentials {
  const c = raw ?? {};
  const str = (k: string) => (typeof c[k] === 'string' && (c[k] as string).length > 0 ? (c[k] as string) : null);
  const account = str('account') ?? (brokerAccountId || null);
  const missing = ['username', 'domain', 'password', 'server'].filter((k) => !str(k));
  if (!account) missing.push('account');
  if (missing.length > 0) throw new AppError('invalid_request', `DXtrade credentials lack ${missing.join(', ')}`);
  return {
    username: str('username')!,
    domain: str('domain')!,
    password: str('password')!,
    server: str('server')!,
    account: account!,
    ...(typeof c.hedging === 'boolean' ? { hedging: c.hedging } : {}),
  };
}

export function createDxTradeAdapterFactory(opts: {
  /** The REST base for a stored server (tests and demo mode point it at the simulator). */
  resolveBaseUrl(server: string, environment: string | null): string;
  timeoutMs?: number;
  pollIntervalMs?: number;
  fetch?: typeof fetch;
}): AdapterFactory {
  return {
    platform: 'platformd',
    capabilities: dxCapabilities(),
    async create(account): Promise<BrokerAdapter> {
      const creds = parseDxCredentials(account.credentials, account.brokerAccountId);
      // Lazy: the first call logs in, so a broker that is down at start-up does not stop the service.
      // Guarded: a netting account (learned on the first read) lacks SL/TP writes; refused before the broker.
      return guardCapabilities(
        new DxTradeAdapter({
          baseUrl: opts.resolveBaseUrl(creds.server, account.environment),
          username: creds.username,
          domain: creds.domain,
          password: creds.password,
          account: creds.account,
          ...(creds.hedging !== undefined ? { hedging: creds.hedging } : {}),
          ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
          ...(opts.pollIntervalMs !== undefined ? { pollIntervalMs: opts.pollIntervalMs } : {}),
          ...(opts.fetch ? { fetch: opts.fetch } : {}),
        }),
      );
    },
  };
}
