import { AppError } from '../../domain/errors.js';
import { CTraderConnection, type CTraderEndpoint } from './connection.js';
import { readError } from './errors.js';
import type { AccountListResMsg } from '../../protocols/ctrader/messages.js';
import { PT } from '../../protocols/ctrader/payload-types.js';
import type { CTraderTokens } from './tokens.js';

/**
 * The connect flow of platform C (the spec's OAuth popup), without HTTP routes: build the consent URL, trade the
 * code for tokens, list the accounts the token grants, and check the one the user picked. Parameter and field
 * names are the fact sheet's (§3, §4.1).
 */

export interface AuthorizationUrlInput {
  oauthBaseUrl: string;
  clientId: string;
  redirectUri: string;
  state: string;
  /** `trading` (full) or `accounts` (view only). */
  scope?: 'trading' | 'accounts';
}

/** `${oauthBaseUrl}/apps/auth?client_id&redirect_uri&scope&state&product=web`. */
export function buildAuthorizationUrl(i: AuthorizationUrlInput): string {
  const url = new URL('/apps/auth', i.oauthBaseUrl);
  url.searchParams.set('client_id', i.clientId);
  url.searchParams.set('redirect_uri', i.redirectUri);
  url.searchParams.set('scope', i.scope ?? 'trading');
  url.searchParams.set('product', 'web');
  url.searchParams.set('state', i.state);
  return url.toString();
}

export interface TokenEndpointInput {
  oauthBaseUrl: string;
  clientId: string;
  clientSecret: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export interface IssuedTokens extends CTraderTokens {
  expiresIn: number;
  tokenType: string;
}

/** grant_type=authorization_code at `${oauthBaseUrl}/apps/token` (a code lives one minute and works once). */
export function exchangeCode(i: TokenEndpointInput & { code: string; redirectUri: string }): Promise<IssuedTokens> {
  return tokenRequest(i, { grant_type: 'authorization_code', code: i.code, redirect_uri: i.redirectUri });
}

/** grant_type=refresh_token; the old pair stops working once this succeeds. */
export function refreshTokens(i: TokenEndpointInput & { refreshToken: string }): Promise<IssuedTokens> {
  return tokenRequest(i, { grant_type: 'refresh_token', refresh_token: i.refreshToken });
}

async function tokenRequest(i: TokenEndpointInput, params: Record<string, string>): Promise<IssuedTokens> {
  const body = new URLSearchParams({ ...params, client_id: i.clientId, client_secret: i.clientSecret });
  let res: Response;
  try {
    res = await (i.fetch ?? fetch)(new URL('/apps/token', i.oauthBaseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body,
      signal: AbortSignal.timeout(i.timeoutMs ?? 10_000),
    });
  } catch (err) {
    throw new AppError('upstream_unavailable', `cTrader token endpoint unreachable: ${(err as Error).message}`, {
      retryable: true,
      cause: err,
    });
  }
  const json = (await res.json().catch(() => null)) as Record<string, unknown> | null;
  // Failures come back as errorCode/description (status not documented), so the body decides, not the status.
  if (!json || typeof json.accessToken !== 'string' || typeof json.refreshToken !== 'string' || json.errorCode) {
    const code = typeof json?.errorCode === 'string' ? json.errorCode : `HTTP ${res.status}`;
    const desc = typeof json?.description === 'string' ? json.description : 'no tokens in the answer';
    throw new AppError(
      res.status >= 500 ? 'upstream_error' : 'invalid_request',
      `cTrader refused the token request: ${code}: ${desc}`,
      {
        details: { errorCode: code },
      },
    );
  }
  return {
    accessToken: json.accessToken,
    refreshToken: json.refreshToken,
    expiresIn: typeof json.expiresIn === 'number' ? json.expiresIn : Number(json.expiresIn ?? 0),
    tokenType: typeof json.tokenType === 'string' ? json.tokenType : 'bearer',
  };
}

export interface CTraderAccountListing {
  ctidTraderAccountId: string;
  isLive: boolean;
  environment: 'demo' | 'live';
  /** Account number the user sees in cTrader. */
  traderLogin: string | null;
  brokerName: string | null;
}

export interface AccountListResult {
  accounts: CTraderAccountListing[];
  /** false when the token only has the `accounts` (view) scope. */
  canTrade: boolean;
}

/**
 * ProtoOAGetAccountListByAccessTokenReq on a short-lived connection (either host lists both environments).
 */
export async function listAccountsForToken(i: {
  endpoint: CTraderEndpoint;
  clientId: string;
  clientSecret: string;
  accessToken: string;
  timeoutMs?: number;
}): Promise<AccountListResult> {
  const timeoutMs = i.timeoutMs ?? 10_000;
  const conn = new CTraderConnection({
    endpoint: i.endpoint,
    clientId: i.clientId,
    clientSecret: i.clientSecret,
    requestTimeoutMs: timeoutMs,
  });
  try {
    await conn.ready(timeoutMs);
    const [env] = await conn.request(PT.GET_ACCOUNTS_BY_ACCESS_TOKEN_REQ, { accessToken: i.accessToken });
    const res = env!.payload as unknown as AccountListResMsg;
    return {
      canTrade: (res.permissionScope ?? 1) === 1,
      accounts: (res.ctidTraderAccount ?? []).map((a) => ({
        ctidTraderAccountId: String(a.ctidTraderAccountId),
        isLive: a.isLive === true,
        environment: a.isLive === true ? 'live' : 'demo',
        traderLogin: a.traderLogin !== undefined ? String(a.traderLogin) : null,
        brokerName: a.brokerTitleShort ?? null,
      })),
    };
  } catch (err) {
    throw readError(err, 'cTrader account list');
  } finally {
    await conn.close();
  }
}

/**
 * The account the user picked must be one the token grants, in the environment they chose; the account number
 * (traderLogin) is checked too when given, so a typo does not connect someone else's account.
 */
export function verifyCTraderAccount(
  accounts: CTraderAccountListing[],
  pick: {
    ctidTraderAccountId?: string | number | null;
    accountNumber?: string | number | null;
    environment?: string | null;
  },
): CTraderAccountListing {
  const want = (v: string | number | null | undefined) =>
    v === null || v === undefined || v === '' ? null : String(v).replace(/^#/, '').trim();
  const id = want(pick.ctidTraderAccountId);
  const number = want(pick.accountNumber);
  if (!id && !number)
    throw new AppError(
      'invalid_request',
      'choose a cTrader account: ctidTraderAccountId or account number is required',
    );
  const matches = accounts.filter(
    (a) => (!id || a.ctidTraderAccountId === id) && (!number || a.traderLogin === number),
  );
  if (matches.length === 0) {
    const known = accounts.map((a) => `${a.traderLogin ?? '?'} (${a.environment})`).join(', ') || 'none';
    throw new AppError(
      'invalid_request',
      `this cTrader ID does not grant account ${number ?? id}; it grants: ${known}`,
      {
        details: { ctidTraderAccountId: id, accountNumber: number },
      },
    );
  }
  const env = pick.environment ? String(pick.environment).toLowerCase() : null;
  if (env && env !== 'demo' && env !== 'live')
    throw new AppError('invalid_request', `environment must be demo or live, not ${pick.environment}`);
  const inEnv = env ? matches.filter((a) => a.environment === env) : matches;
  if (inEnv.length === 0) {
    throw new AppError(
      'invalid_request',
      `account ${number ?? id} is a ${matches[0]!.environment} account, not ${env}`,
      {
        details: { environment: matches[0]!.environment },
      },
    );
  }
  if (inEnv.length > 1)
    throw new AppError('invalid_request', `account number ${number} is ambiguous; pick it by ctidTraderAccountId`);
  return inEnv[0]!;
}
