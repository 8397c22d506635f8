/**
 * MT5 trade server return codes (MqlTradeResult.retcode) the bridge names. The EA passes the terminal's retcode
 * through unchanged; the service decides from it whether the write applied (see platforms/bridge/outcome.ts).
 */
export const RETCODE = {
  REQUOTE: 10004,
  REJECT: 10006,
  CANCEL: 10007,
  PLACED: 10008,
  DONE: 10009,
  DONE_PARTIAL: 10010,
  ERROR: 10011,
  TIMEOUT: 10012,
  INVALID: 10013,
  INVALID_VOLUME: 10014,
  INVALID_PRICE: 10015,
  INVALID_STOPS: 10016,
  TRADE_DISABLED: 10017,
  MARKET_CLOSED: 10018,
  NO_MONEY: 10019,
  PRICE_CHANGED: 10020,
  PRICE_OFF: 10021,
  TOO_MANY_REQUESTS: 10024,
  NO_CHANGES: 10025,
  CONNECTION: 10031,
  POSITION_CLOSED: 10036,
} as const;

const NAMES: Record<number, string> = Object.fromEntries(Object.entries(RETCODE).map(([k, v]) => [v, k]));

/** TRADE_RETCODE_<NAME>, or the number when it is not one the bridge names. */
export const retcodeName = (code: number): string =>
  NAMES[code] ? `TRADE_RETCODE_${NAMES[code]}` : `TRADE_RETCODE_${code}`;

/** The request did what was asked (in full or, for 10010, in part). */
export const isSuccess = (code: number): boolean =>
  code === RETCODE.DONE || code === RETCODE.PLACED || code === RETCODE.DONE_PARTIAL || code === RETCODE.NO_CHANGES;

/**
 * Refusals that applied nothing and that a sender may repeat with the same command id: the EA does not remember
 * them as executed (anything else it remembers, so a resend gets the first answer, never a second execution).
 */
export const isRetryableRefusal = (code: number): boolean =>
  code === RETCODE.REQUOTE ||
  code === RETCODE.PRICE_CHANGED ||
  code === RETCODE.PRICE_OFF ||
  code === RETCODE.TOO_MANY_REQUESTS ||
  code === RETCODE.CONNECTION;
