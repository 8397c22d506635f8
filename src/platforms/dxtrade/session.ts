import { AppError } from '../../domain/errors.js';
import { readError } from './errors.js';
import { parseLogin } from './parse.js';
import type { DxRawClient } from './raw-client.js';

export interface DxLogin {
  username: string;
  domain: string;
  password: string;
}

/**
 * The session token of one connection. The spec: the token dies a pre-configured `timeout` after the client's
 * last request (401 then, and the client logs in again); a client is expected to track that and renew with
 * POST /ping. So: log in lazily, ping when half the timeout has passed since the last request, log in again after
 * a 401 or a refused ping. Concurrent callers share one login in flight.
 */
export class DxSession {
  private token: string | null = null;
  private timeoutMs: number | null = null;
  private lastUse = 0;
  private inflight: Promise<void> | null = null;

  constructor(
    private readonly raw: DxRawClient,
    private readonly login: DxLogin,
    private readonly now: () => number = Date.now,
  ) {}

  async sessionToken(): Promise<string> {
    if (!this.token) await this.single(() => this.logIn());
    else if (this.timeoutMs !== null && this.now() - this.lastUse >= this.timeoutMs / 2)
      await this.single(() => this.renew());
    this.lastUse = this.now();
    return this.token!;
  }

  /** After a 401 with `stale`: a newer token already in place is kept. */
  async invalidate(stale: string): Promise<void> {
    if (this.token !== null && this.token !== stale) return;
    this.token = null;
    await this.single(() => this.logIn());
  }

  async close(): Promise<void> {
    const t = this.token;
    this.token = null;
    if (t) await this.raw.logout(t).catch(() => undefined);
  }

  private async single(fn: () => Promise<void>): Promise<void> {
    if (!this.inflight) this.inflight = fn().finally(() => (this.inflight = null));
    await this.inflight;
  }

  private async renew(): Promise<void> {
    const t = this.token;
    if (!t) return this.logIn();
    const r = await this.raw.ping(t);
    if (r.kind === 'response' && r.status >= 200 && r.status < 300) {
      this.lastUse = this.now();
      return;
    }
    if (r.kind === 'response' && r.status === 401) return this.logIn();
    throw readError(r, 'DXtrade session ping');
  }

  private async logIn(): Promise<void> {
    const r = await this.raw.login(this.login);
    if (r.kind === 'response' && r.status >= 200 && r.status < 300) {
      const { token, timeoutMs } = parseLogin(r.body);
      this.token = token;
      this.timeoutMs = timeoutMs;
      this.lastUse = this.now();
      return;
    }
    this.token = null;
    if (r.kind === 'response' && (r.status === 400 || r.status === 401 || r.status === 403))
      throw new AppError('broker_auth_failed', 'DXtrade refused the login: check username, domain and password', {
        details: { status: r.status },
      });
    throw readError(r, 'DXtrade login');
  }
}
