import type { Decimal } from '../../domain/decimal.js';
import { AppError } from '../../domain/errors.js';
import { readError } from './errors.js';
import { parseAllAccounts, parseTokenPair } from './parse.js';
import { TradeLockerRawClient } from './raw-client.js';

/**
 * The platform B connection flow (spec: choose Demo/Live, enter server, email and password; if several
 * accounts come back, pick one and verify its account number). Logic only: the app's routes call these.
 */

export interface TradeLockerAccountChoice {
  /** all-accounts `id`: path accountId, and the number the TradeLocker UI shows after `#`. */
  id: string;
  /** all-accounts `accNum`: the per-user ordinal sent as the accNum header. */
  accNum: number;
  /** What the user compares against their broker: the same value as `id`. */
  accountNumber: string;
  name: string;
  currency: string;
  balance: Decimal;
}

export async function discoverTradeLockerAccounts(input: {
  baseUrl: string;
  email: string;
  password: string;
  server: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}): Promise<TradeLockerAccountChoice[]> {
  for (const k of ['baseUrl', 'email', 'password', 'server'] as const) {
    if (typeof input[k] !== 'string' || input[k].trim() === '')
      throw new AppError('invalid_request', `${k} is required`);
  }
  const raw = new TradeLockerRawClient({
    baseUrl: input.baseUrl,
    timeoutMs: input.timeoutMs ?? 15_000,
    ...(input.fetch ? { fetch: input.fetch } : {}),
  });
  const login = await raw.signIn({ email: input.email.trim(), password: input.password, server: input.server.trim() });
  if (login.kind === 'response' && (login.status === 400 || login.status === 401 || login.status === 403)) {
    // Never echo what was typed: the message may end up in logs.
    throw new AppError(
      'broker_auth_failed',
      'TradeLocker refused the sign-in: check email, password, server and environment',
    );
  }
  if (login.kind !== 'response' || (login.status !== 200 && login.status !== 201))
    throw readError(login, 'TradeLocker sign-in');
  const { accessToken } = parseTokenPair(login.body);
  const list = await raw.allAccounts({ accessToken });
  if (list.kind !== 'response' || list.status !== 200) throw readError(list, 'TradeLocker account list');
  const accounts = parseAllAccounts(list.body);
  if (accounts.length === 0)
    throw new AppError('not_found', 'this TradeLocker user has no trading accounts on that server');
  return accounts.map((a) => ({
    id: a.id,
    accNum: a.accNum,
    accountNumber: a.id,
    name: a.name,
    currency: a.currency,
    balance: a.balance,
  }));
}

const normalise = (s: string) => s.trim().replace(/^#/, '').trim();

/** The user's pick must be one of the returned accounts and its number must match what they typed. */
export function verifyTradeLockerAccount(
  accounts: TradeLockerAccountChoice[],
  pick: { accountId: string; accountNumber: string },
): TradeLockerAccountChoice {
  const chosen = accounts.find((a) => a.id === String(pick.accountId));
  if (!chosen)
    throw new AppError('invalid_request', 'the selected account is not among the accounts TradeLocker returned', {
      details: { field: 'accountId' },
    });
  if (normalise(String(pick.accountNumber ?? '')) !== normalise(chosen.accountNumber)) {
    throw new AppError('invalid_request', 'the account number does not match the selected account', {
      details: { field: 'accountNumber' },
    });
  }
  return chosen;
}
