import type { SimErrorCode } from '../contract.js';

/** SimError codes -> Open API error code names (ProtoOAErrorCode, fact sheet §5). */
const MAP: Record<SimErrorCode, string> = {
  UNKNOWN_ACCOUNT: 'CH_CTID_TRADER_ACCOUNT_NOT_FOUND',
  UNKNOWN_SYMBOL: 'SYMBOL_NOT_FOUND',
  INVALID_VOLUME: 'TRADING_BAD_VOLUME',
  INVALID_PRICE: 'TRADING_BAD_PRICES',
  INVALID_STOPS: 'TRADING_BAD_STOPS',
  NOT_ENOUGH_MONEY: 'NOT_ENOUGH_MONEY',
  POSITION_NOT_FOUND: 'POSITION_NOT_FOUND',
  ORDER_NOT_FOUND: 'ORDER_NOT_FOUND',
  MARKET_CLOSED: 'MARKET_CLOSED',
  REJECTED: 'TRADING_DISABLED',
};

/** The SimBroker throws errors carrying a SimErrorCode; SimError itself is not part of the simulator contract. */
export function simErrorCode(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code in MAP ? MAP[code as SimErrorCode] : null;
}
