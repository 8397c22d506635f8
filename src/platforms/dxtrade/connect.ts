import type { Decimal } from '../../domain/decimal.js';
import { AppError } from '../../domain/errors.js';
import { readError } from './errors.js';
import { parseLogin, parseMetrics, parseUser } from './parse.js';
import { DxRawClient } from './raw-client.js';

/**
 * The platform D connection flow: log in with username, domain and password, list the user's accounts (with
 * balance and whether each is position-based), and let the user pick one. Logic only: the app's routes call these.
 */

export interface DxAccountChoice {
  /** The account code: the path segment of every account request. */
  account: string;
  currency: string;
  balance: Decimal;
  /** Account Details `isPositionBased`. */
  hedging: boolean;
}

export async function discoverDxAccounts(input: {
  baseUrl: string;
  username: string;
  domain: string;
  password: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}): Promise<DxAccountChoice[]> {
  const raw = new DxRawClient({
    baseUrl: input.baseUrl,
    timeoutMs: input.timeoutMs ?? 15_000,
    ...(input.fetch ? { fetch: input.fetch } : {}),
  });
  const username = input.username.trim();
  const domain = input.domain.trim() || 'default';
  const login = await raw.login({ username, domain, password: input.password });
  if (login.kind === 'response' && (login.status === 400 || login.status === 401 || login.status === 403))
    // Never echo what was typed: the message may end up in logs.
    throw new AppError('broker_auth_failed', 'DXtrade refused the login: check username, domain, password and server');
  if (login.kind !== 'response' || login.status !== 200) throw readError(login, 'DXtrade login');
  const { token } = parseLogin(login.body);
  try {
    const user = await raw.user(token, `${username}@${domain}`);
    if (user.kind !== 'response' || user.status !== 200) throw readError(user, 'DXtrade user');
    const refs = parseUser(user.body);
    if (refs.length === 0) throw new AppError('not_found', 'this DXtrade user has no trading accounts on that server');
    const out: DxAccountChoice[] = [];
    for (const ref of refs) {
      const m = await raw.metrics(token, ref.account);
      if (m.kind !== 'response' || m.status !== 200) throw readError(m, 'DXtrade account metrics');
      out.push({ ...ref, balance: parseMetrics(m.body).balance });
    }
    return out;
  } finally {
    await raw.logout(token).catch(() => undefined);
  }
}

/** The user's pick must be one of the accounts the server listed. */
export function pickDxAccount(accounts: DxAccountChoice[], account: string): DxAccountChoice {
  const chosen = accounts.find((a) => a.account === account.trim());
  if (!chosen)
    throw new AppError('invalid_request', 'the selected account is not among the accounts DXtrade returned', {
      details: { field: 'account' },
    });
  return chosen;
}
