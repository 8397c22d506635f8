import type { AuthService } from '../auth/auth-service.js';
import { AppError } from '../domain/errors.js';
import type { Store } from '../store/store.js';
import { BridgeTokens } from '../auth/bridge-tokens.js';
import { receiptOps } from './receipt-ops.js';
import { peopleOps } from './people-ops.js';

/**
 * The operator's commands (users, tokens, API keys), as named operations over the store. The CLI runs them
 * on the store itself when it can open it, and through the running service's operator listener
 * (api/operator/server.ts) when the embedded store is held by that service: one implementation for both.
 * Each returns plain JSON (dates as ISO strings), so an answer reads the same either way.
 */
export interface AdminDeps {
  store: Store;
  auth: AuthService;
}

type Args = Record<string, unknown>;
export type AdminOp = (d: AdminDeps, args: Args) => Promise<unknown>;

const str = (a: Args, name: string): string => {
  const v = a[name];
  if (typeof v !== 'string' || v === '') throw new AppError('invalid_request', `${name} is required`);
  return v;
};

async function userId(store: Store, email: string): Promise<string> {
  const u = await store.users.byEmail(email);
  if (!u)
    throw new AppError(
      'not_found',
      `no user with email ${email} (create one with: copytrade users create --email ${email} --password ...)`,
    );
  return u.id;
}

/** A platform A account of the user: the only kind a bridge token is for. */
async function bridgeAccount(store: Store, a: Args): Promise<string> {
  const email = str(a, 'email');
  const id = str(a, 'account');
  const acc = await store.accounts.byId(id);
  if (!acc || acc.userId !== (await userId(store, email)) || acc.removedAt || acc.platform !== 'platforma')
    throw new AppError('not_found', `no platform A account ${id} for ${email}`);
  return acc.id;
}

export const adminOps: Record<string, AdminOp> = {
  'bridge-tokens.create': async ({ store }, a) => {
    const t = await new BridgeTokens(store.bridgeTokens).create(await bridgeAccount(store, a));
    return { id: t.id, token: t.token, createdAt: t.createdAt.toISOString() };
  },
  'bridge-tokens.rotate': async ({ store }, a) => {
    const overlap = a.overlap === undefined || a.overlap === null ? undefined : Number(a.overlap);
    if (overlap !== undefined && (!Number.isInteger(overlap) || overlap < 0))
      throw new AppError('invalid_request', '--overlap must be a non-negative whole number of seconds');
    const t = await new BridgeTokens(store.bridgeTokens).rotate(await bridgeAccount(store, a), overlap);
    return { id: t.id, token: t.token, createdAt: t.createdAt.toISOString() };
  },
  'bridge-tokens.list': async ({ store }, a) =>
    new BridgeTokens(store.bridgeTokens).list(await bridgeAccount(store, a)),
  'bridge-tokens.revoke': async ({ store }, a) => {
    const account = await bridgeAccount(store, a);
    const id = str(a, 'id');
    if (!(await new BridgeTokens(store.bridgeTokens).revoke(account, id)))
      throw new AppError('not_found', `no bridge token ${id} for account ${account}`);
    return { id, revoked: true };
  },
  ...receiptOps,
  ...peopleOps,
  migrate: async ({ store }) => ({ ok: true, store: store.database.kind, location: store.database.location }),
  'users.create': async ({ auth }, a) => auth.createUser(str(a, 'email'), str(a, 'password')),
  'tokens.create': async ({ store, auth }, a) => {
    const t = await auth.issueToken(await userId(store, str(a, 'email')));
    return { accessToken: t.accessToken, expiresAt: t.expiresAt.toISOString() };
  },
  'keys.create': async ({ store, auth }, a) => {
    const { key, apiKey } = await auth.createApiKey(
      await userId(store, str(a, 'email')),
      typeof a.name === 'string' ? a.name : 'cli',
    );
    return { id: key.id, apiKey, name: key.name };
  },
  'keys.list': async ({ store, auth }, a) => auth.listApiKeys(await userId(store, str(a, 'email'))),
  'keys.rotate': async ({ store, auth }, a) => {
    const email = str(a, 'email');
    const id = str(a, 'id');
    const overlap = a.overlap === undefined || a.overlap === null ? undefined : Number(a.overlap);
    if (overlap !== undefined && (!Number.isInteger(overlap) || overlap < 0))
      throw new AppError('invalid_request', '--overlap must be a non-negative whole number of seconds');
    const r = await auth.rotateApiKey(await userId(store, email), id, overlap);
    if (!r) throw new AppError('not_found', `no active API key ${id} for ${email}`);
    return { id: r.key.id, apiKey: r.apiKey, previousId: id, previousExpiresAt: r.previousExpiresAt.toISOString() };
  },
  'users.reset-password': async ({ auth }, a) => {
    const email = str(a, 'email');
    const r = await auth.resetPassword(email, str(a, 'password'), { revokeApiKeys: a.revokeApiKeys === true });
    return { id: r.userId, email, tokensRevoked: r.tokensRevoked, apiKeysRevoked: r.apiKeysRevoked };
  },
  'keys.limit': async ({ store }, a) => {
    const id = str(a, 'id');
    const limit = (name: 'writes' | 'reads'): number | null | undefined => {
      const v = a[name];
      if (v === undefined) return undefined;
      if (v === null || v === 'default') return null;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 1_000_000)
        throw new AppError('invalid_request', `--${name} must be a whole number from 1 to 1000000, or "default"`);
      return n;
    };
    const writes = limit('writes');
    const reads = limit('reads');
    const k = await store.credentials.setApiKeyLimits(id, {
      ...(writes !== undefined ? { writes } : {}),
      ...(reads !== undefined ? { reads } : {}),
    });
    if (!k) throw new AppError('not_found', `no API key ${id}`);
    return { id: k.id, writes: k.rateLimitWrites, reads: k.rateLimitReads };
  },
  'keys.revoke': async ({ store, auth }, a) => {
    const email = str(a, 'email');
    const id = str(a, 'id');
    if (!(await auth.revokeApiKey(await userId(store, email), id)))
      throw new AppError('not_found', `no active API key ${id} for ${email}`);
    return { id, revoked: true };
  },
};

/** Runs one operation; the answer is what it would be after a trip through JSON (dates as strings). */
export async function runAdminOp(d: AdminDeps, name: string, args: Args): Promise<unknown> {
  const op = Object.hasOwn(adminOps, name) ? adminOps[name] : undefined;
  if (!op) throw new AppError('not_found', `no operator command ${name}`);
  return JSON.parse(JSON.stringify(await op(d, args)) ?? 'null');
}
