import { randomBytes } from 'node:crypto';

/**
 * OAuth state of the simulated cTrader ID: authorization codes, access tokens and refresh tokens. Shared by the
 * HTTP token endpoint and the Open API sessions, so a token issued over HTTP authorises accounts on the socket.
 * Rules from the fact sheet §3: a code lives one minute and is single-use; a refresh token never expires but is
 * single-use, and refreshing invalidates the previous access+refresh pair.
 */

export type Scope = 'accounts' | 'trading';

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  tokenType: 'bearer';
}

interface AccessRec {
  userId: string;
  scope: Scope;
  expiresAt: number;
  valid: boolean;
}

interface RefreshRec {
  userId: string;
  scope: Scope;
  accessToken: string;
  used: boolean;
}

interface CodeRec {
  userId: string;
  clientId: string;
  redirectUri: string;
  scope: Scope;
  expiresAt: number;
  used: boolean;
}

export type TokenCheck =
  | { ok: true; userId: string; scope: Scope }
  | { ok: false; reason: 'unknown' | 'expired' | 'revoked' };

const secret = (prefix: string) => `${prefix}${randomBytes(24).toString('base64url')}`;

/** The tokens a restart of the simulator must keep (codes live a minute: not kept). */
export interface TokenStoreState {
  access: Array<[string, AccessRec]>;
  refresh: Array<[string, RefreshRec]>;
}

export class SimTokenStore {
  private readonly access = new Map<string, AccessRec>();
  private readonly refresh = new Map<string, RefreshRec>();
  private readonly codes = new Map<string, CodeRec>();
  private readonly invalidationListeners = new Set<(accessTokens: string[], reason: string) => void>();
  /** Called after every change of a kept token, before the caller answers anyone (see UpstreamState). */
  onChange: (() => void) | null = null;

  constructor(
    private readonly accessTtlSec: number,
    private readonly codeTtlMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Sessions authorised with a token are dropped when it is invalidated; the server listens here. */
  onInvalidated(listener: (accessTokens: string[], reason: string) => void): () => void {
    this.invalidationListeners.add(listener);
    return () => this.invalidationListeners.delete(listener);
  }

  state(): TokenStoreState {
    return { access: [...this.access], refresh: [...this.refresh] };
  }

  restore(state: TokenStoreState): void {
    for (const [k, v] of state.access) this.access.set(k, { ...v });
    for (const [k, v] of state.refresh) this.refresh.set(k, { ...v });
  }

  issue(userId: string, scope: Scope = 'trading'): TokenPair {
    const accessToken = secret('sim_at_');
    const refreshToken = secret('sim_rt_');
    this.access.set(accessToken, { userId, scope, expiresAt: this.now() + this.accessTtlSec * 1000, valid: true });
    this.refresh.set(refreshToken, { userId, scope, accessToken, used: false });
    this.onChange?.();
    return { accessToken, refreshToken, expiresIn: this.accessTtlSec, tokenType: 'bearer' };
  }

  issueCode(userId: string, clientId: string, redirectUri: string, scope: Scope): string {
    const code = secret('sim_code_');
    this.codes.set(code, { userId, clientId, redirectUri, scope, expiresAt: this.now() + this.codeTtlMs, used: false });
    return code;
  }

  exchangeCode(code: string, clientId: string, redirectUri: string): TokenPair | { error: string } {
    const rec = this.codes.get(code);
    if (!rec || rec.used) return { error: 'authorization code is unknown or already used' };
    rec.used = true;
    if (rec.expiresAt < this.now()) return { error: 'authorization code expired' };
    if (rec.clientId !== clientId) return { error: 'authorization code was issued to another client' };
    if (rec.redirectUri !== redirectUri) return { error: 'redirect_uri does not match the authorization request' };
    return this.issue(rec.userId, rec.scope);
  }

  /** Single-use refresh: the old pair dies (sessions on the old access token get the invalidated event). */
  refreshPair(refreshToken: string): TokenPair | { error: string } {
    const rec = this.refresh.get(refreshToken);
    if (!rec || rec.used) return { error: 'refresh token is unknown, revoked or already used' };
    rec.used = true;
    this.invalidate([rec.accessToken], 'access token replaced by a refresh');
    return this.issue(rec.userId, rec.scope);
  }

  check(accessToken: string): TokenCheck {
    const rec = this.access.get(accessToken);
    if (!rec) return { ok: false, reason: 'unknown' };
    if (!rec.valid) return { ok: false, reason: 'revoked' };
    if (rec.expiresAt < this.now()) return { ok: false, reason: 'expired' };
    return { ok: true, userId: rec.userId, scope: rec.scope };
  }

  /** Fault `token_expired`: the access token stops working, its refresh token still works. */
  expire(accessToken: string): void {
    const rec = this.access.get(accessToken);
    if (!rec) return;
    rec.expiresAt = this.now() - 1;
    this.onChange?.();
    this.emit([accessToken], 'access token expired');
  }

  /** Fault `token_invalidated` (user revoked the app): every token of the user dies, refresh tokens too. */
  revokeUser(userId: string, reason = 'access revoked by the user'): void {
    const dead: string[] = [];
    for (const [t, rec] of this.access) {
      if (rec.userId === userId && rec.valid) {
        rec.valid = false;
        dead.push(t);
      }
    }
    for (const rec of this.refresh.values()) if (rec.userId === userId) rec.used = true;
    this.onChange?.();
    this.emit(dead, reason);
  }

  private invalidate(accessTokens: string[], reason: string): void {
    for (const t of accessTokens) {
      const rec = this.access.get(t);
      if (rec) rec.valid = false;
    }
    this.emit(accessTokens, reason);
  }

  private emit(accessTokens: string[], reason: string): void {
    if (accessTokens.length === 0) return;
    for (const l of this.invalidationListeners) l(accessTokens, reason);
  }
}
