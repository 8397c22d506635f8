import { Decimal } from '../domain/decimal.js';
import type { Account } from '../domain/account.js';
import type { CopyRule } from '../domain/copy-rule.js';
import { conversionPairs } from '../domain/quote-currency.js';
import type { OrderType, Quote } from '../domain/types.js';
import type { BrokerAdapter } from '../platforms/adapter.js';

export interface SlaveMarket {
  quote: Quote | null;
  crossRate: Decimal | null;
}

const NONE: SlaveMarket = { quote: null, crossRate: null };

/** Does planning this copy need prices from the Slave's broker? Only rules that bound slippage or size by risk. */
export const needsMarket = (rule: CopyRule, type: OrderType): boolean =>
  (Boolean(rule.maxSlippage || rule.maxSlippagePoints) && type === 'market') || rule.sizing.mode === 'risk_percent';

const mid = (q: Quote | null) => (q && q.bid.gt(0) && q.ask.gt(0) ? q.bid.plus(q.ask).div(2) : null);

/**
 * The Slave broker's prices a rule needs at plan time: the symbol's bid/ask (slippage guard, risk entry) and,
 * for a cross sized by risk, the rate that turns its quote currency into the account's. A failed read gives
 * null: the planner then skips a slippage-bound copy (slippage_unknown) and sizes a risk copy from the
 * Master's fill, and a cross at rate 1 (docs/open-points.md).
 */
export async function slaveMarket(
  adapter: BrokerAdapter,
  account: Account,
  rule: CopyRule,
  symbol: string,
  type: OrderType,
): Promise<SlaveMarket> {
  if (!adapter.quote || !needsMarket(rule, type)) return NONE;
  const read = (s: string) => adapter.quote!(s).catch(() => null);
  const pairs = rule.sizing.mode === 'risk_percent' ? conversionPairs(symbol, account.currency) : null;
  const [quote, direct, inverse] = await Promise.all([
    type === 'market' ? read(symbol) : Promise.resolve(null),
    pairs ? read(pairs.direct) : Promise.resolve(null),
    pairs ? read(pairs.inverse) : Promise.resolve(null),
  ]);
  const d = mid(direct);
  const i = mid(inverse);
  return { quote, crossRate: d ?? (i ? new Decimal(1).div(i) : null) };
}
