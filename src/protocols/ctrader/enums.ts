/** Enum values from fact sheet §5 as plain numbers (decoded messages carry numbers, not names). */
export const OrderType = {
  MARKET: 1,
  LIMIT: 2,
  STOP: 3,
  STOP_LOSS_TAKE_PROFIT: 4,
  MARKET_RANGE: 5,
  STOP_LIMIT: 6,
} as const;
export const TradeSide = { BUY: 1, SELL: 2 } as const;
export const TimeInForce = {
  GOOD_TILL_DATE: 1,
  GOOD_TILL_CANCEL: 2,
  IMMEDIATE_OR_CANCEL: 3,
  FILL_OR_KILL: 4,
  MARKET_ON_OPEN: 5,
} as const;
export const ExecutionType = {
  ORDER_ACCEPTED: 2,
  ORDER_FILLED: 3,
  ORDER_REPLACED: 4,
  ORDER_CANCELLED: 5,
  ORDER_EXPIRED: 6,
  ORDER_REJECTED: 7,
  ORDER_CANCEL_REJECTED: 8,
  SWAP: 9,
  DEPOSIT_WITHDRAW: 10,
  ORDER_PARTIAL_FILL: 11,
  BONUS_DEPOSIT_WITHDRAW: 12,
} as const;
export const PositionStatus = { OPEN: 1, CLOSED: 2, CREATED: 3, ERROR: 4 } as const;
export const OrderStatus = { ACCEPTED: 1, FILLED: 2, REJECTED: 3, EXPIRED: 4, CANCELLED: 5 } as const;
export const DealStatus = {
  FILLED: 2,
  PARTIALLY_FILLED: 3,
  REJECTED: 4,
  INTERNALLY_REJECTED: 5,
  ERROR: 6,
  MISSED: 7,
} as const;
