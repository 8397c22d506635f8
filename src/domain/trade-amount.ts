import { Decimal } from './decimal.js';
import type { InstrumentSpec } from './types.js';

/**
 * The minimum trade amount (CopyFactory's minTradeAmount): a copy whose value, volume x contract size x price in
 * the Slave's account currency, is below `min` is not sent. Null when it passes.
 */
export function tradeAmountSkip(
  min: string,
  volume: Decimal,
  spec: InstrumentSpec,
  price: Decimal | null,
  toAccount: Decimal,
  currency: string | null,
): { reason: 'trade_amount_below_minimum' | 'trade_amount_unknown'; detail: string } | null {
  if (!price)
    return {
      reason: 'trade_amount_unknown',
      detail: `minTradeAmount is ${min}, but there is no price to value the copy at`,
    };
  const amount = volume.mul(spec.contractSize).mul(price).mul(toAccount);
  if (amount.gte(min)) return null;
  return {
    reason: 'trade_amount_below_minimum',
    detail: `${volume} ${spec.symbol} at ${price} is worth ${amount.toDecimalPlaces(2, Decimal.ROUND_DOWN)}${currency ? ` ${currency}` : ''}, below the minimum ${min}`,
  };
}
