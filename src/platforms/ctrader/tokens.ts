/** OAuth tokens of a cTrader ID as the Open API and the token endpoint hand them out. */
export interface CTraderTokens {
  accessToken: string;
  refreshToken: string;
  /** Seconds the access token lives from issue (about 30 days). */
  expiresIn?: number;
}

/**
 * Refresh tokens are single-use and several accounts of one user usually share a pair: the first account to
 * refresh wins, the others must adopt its result instead of spending the dead token (which would look like a
 * revoked grant). One refresher per process, keyed by the refresh token being spent.
 */
export class TokenRefresher {
  private readonly results = new Map<string, Promise<CTraderTokens>>();

  refresh(refreshToken: string, run: () => Promise<CTraderTokens>): Promise<CTraderTokens> {
    let p = this.results.get(refreshToken);
    if (!p) {
      p = run();
      this.results.set(refreshToken, p);
      // A failed attempt (network) may be retried; a successful one is remembered for the sibling accounts.
      p.catch(() => this.results.delete(refreshToken));
    }
    return p;
  }
}
