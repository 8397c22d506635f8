/**
 * What a connection test read from the broker right after an account was connected (or when asked again):
 * the account's funds, its open positions and pending orders, and whether the broker lets it trade. A refused
 * read ends the test with the broker's own words; such an account is not assignable until a test passes.
 */
export interface ConnectionTest {
  ok: boolean;
  checkedAt: string;
  balance: string | null;
  equity: string | null;
  currency: string | null;
  /** How many symbols the broker lists for the account; null where the platform has no such list. */
  symbols: number | null;
  positions: number | null;
  orders: number | null;
  /** As the broker reports it; null when the platform does not say (then trading is tried as the copies come). */
  tradingAllowed: boolean | null;
  /** The read the broker refused (`account`, `symbols`, `positions`, `orders`), when one was. */
  failedRead: string | null;
  /** The broker's words (or why it could not be reached) when a read failed, or why trading is not allowed. */
  error: string | null;
}
