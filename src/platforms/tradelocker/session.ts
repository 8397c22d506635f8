import { AppError } from '../../domain/errors.js';
import { readError } from './errors.js';
import { parseTokenPair, tokenExpiryMs } from './parse.js';
import type { TokenPair, TradeLockerRawClient } from './raw-client.js';

export interface TradeLockerLogin {
  email: string;
  password: string;
  server: string;
}

/**
 * The JWT lifecycle of one connection: sign in lazily, refresh ahead of expiry so writes rarely meet a 401
 * (writes are never retried), fall back to a fresh sign-in when the refresh token is dead too.
 * Concurrent callers share one sign-in/refresh in flight.
 */
export class TradeLockerSession {
  private pair: TokenPair | null = null;
  private expiresAt: number | null = null;
  private refreshAt: number | null = null;
  private inflight: Promise<void> | null = null;

  constructor(
    private readonly raw: TradeLockerRawClient,
    private readonly login: TradeLockerLogin,
    private readonly now: () => number = Date.now,
  ) {}

  async accessToken(): Promise<string> {
    if (!this.pair || (this.refreshAt !== null && this.now() >= this.refreshAt))
      await this.single(() => this.renewNow());
    return this.pair!.accessToken;
  }

  /** Called after a 401 with the token that got it; a newer token already in place is kept. */
  async invalidate(staleToken: string): Promise<void> {
    if (this.pair && this.pair.accessToken !== staleToken) return;
    await this.single(() => this.renewNow(true));
  }

  clear(): void {
    this.pair = null;
  }

  private async single(fn: () => Promise<void>): Promise<void> {
    if (!this.inflight) this.inflight = fn().finally(() => (this.inflight = null));
    await this.inflight;
  }

  private async renewNow(force = false): Promise<void> {
    if (this.pair && (force || this.refreshAt !== null)) {
      const r = await this.raw.refresh(this.pair.refreshToken);
      if (r.kind === 'response' && (r.status === 200 || r.status === 201)) {
        this.store(parseTokenPair(r.body));
        return;
      }
      // A dead refresh token is normal after long idle; anything else (timeout, 5xx) is worth reporting.
      if (r.kind !== 'response' || (r.status !== 400 && r.status !== 401 && r.status !== 403))
        throw readError(r, 'TradeLocker token refresh');
    }
    const r = await this.raw.signIn(this.login);
    if (r.kind === 'response' && (r.status === 200 || r.status === 201)) {
      this.store(parseTokenPair(r.body));
      return;
    }
    this.pair = null;
    if (r.kind === 'response' && (r.status === 400 || r.status === 401 || r.status === 403)) {
      throw new AppError('broker_auth_failed', 'TradeLocker refused the sign-in: check email, password and server', {
        details: { status: r.status },
      });
    }
    throw readError(r, 'TradeLocker sign-in');
  }

  private store(pair: TokenPair): void {
    const now = this.now();
    this.pair = pair;
    this.expiresAt = tokenExpiryMs(pair);
    // Refresh with 10% of the lifetime left, at most 5 minutes early, so a short-lived token still gets used.
    this.refreshAt =
      this.expiresAt === null ? null : this.expiresAt - Math.min(300_000, Math.max(0, (this.expiresAt - now) * 0.1));
  }
}
