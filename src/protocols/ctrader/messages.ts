/**
 * TypeScript shapes of the decoded messages we read or build. int64/uint64 travel as decimal strings because ids
 * exceed 2^53 (fact sheet §6); enums as numbers. Only the fields this project uses are typed; decoding keeps
 * the rest.
 */
export type I64 = string;

export interface ErrorResMsg {
  ctidTraderAccountId?: I64;
  errorCode: string;
  description?: string;
  maintenanceEndTimestamp?: I64;
  retryAfter?: I64;
}

export interface OrderErrorEventMsg {
  ctidTraderAccountId: I64;
  errorCode: string;
  orderId?: I64;
  positionId?: I64;
  description?: string;
}

export interface CtidTraderAccountMsg {
  ctidTraderAccountId: I64;
  isLive?: boolean;
  traderLogin?: I64;
  lastClosingDealTimestamp?: I64;
  lastBalanceUpdateTimestamp?: I64;
  brokerTitleShort?: string;
}

export interface AccountListResMsg {
  accessToken: string;
  permissionScope?: number;
  ctidTraderAccount?: CtidTraderAccountMsg[];
}

export interface RefreshTokenResMsg {
  accessToken: string;
  tokenType: string;
  expiresIn: I64;
  refreshToken: string;
}

export interface TraderMsg {
  ctidTraderAccountId: I64;
  balance: I64;
  balanceVersion?: I64;
  accessRights?: number;
  depositAssetId: I64;
  leverageInCents?: number;
  traderLogin?: I64;
  accountType?: number;
  brokerName?: string;
  registrationTimestamp?: I64;
  moneyDigits?: number;
}

export interface AssetMsg {
  assetId: I64;
  name: string;
  displayName?: string;
  digits?: number;
}

export interface LightSymbolMsg {
  symbolId: I64;
  symbolName?: string;
  enabled?: boolean;
  baseAssetId?: I64;
  quoteAssetId?: I64;
  description?: string;
}

export interface SymbolMsg {
  symbolId: I64;
  digits: number;
  pipPosition: number;
  maxVolume?: I64;
  minVolume?: I64;
  stepVolume?: I64;
  lotSize?: I64;
  tradingMode?: number;
  measurementUnits?: string;
}

export interface TradeDataMsg {
  symbolId: I64;
  volume: I64;
  tradeSide: number;
  openTimestamp?: I64;
  label?: string;
  comment?: string;
  closeTimestamp?: I64;
}

export interface PositionMsg {
  positionId: I64;
  tradeData: TradeDataMsg;
  positionStatus: number;
  swap: I64;
  price?: number;
  stopLoss?: number;
  takeProfit?: number;
  utcLastUpdateTimestamp?: I64;
  commission?: I64;
  moneyDigits?: number;
}

export interface OrderMsg {
  orderId: I64;
  tradeData: TradeDataMsg;
  orderType: number;
  orderStatus: number;
  expirationTimestamp?: I64;
  executionPrice?: number;
  executedVolume?: I64;
  utcLastUpdateTimestamp?: I64;
  closingOrder?: boolean;
  limitPrice?: number;
  stopPrice?: number;
  stopLoss?: number;
  takeProfit?: number;
  clientOrderId?: string;
  timeInForce?: number;
  positionId?: I64;
  relativeStopLoss?: I64;
  relativeTakeProfit?: I64;
}

export interface ClosePositionDetailMsg {
  entryPrice: number;
  grossProfit: I64;
  swap: I64;
  commission: I64;
  balance: I64;
  closedVolume?: I64;
  moneyDigits?: number;
}

export interface DealMsg {
  dealId: I64;
  orderId: I64;
  positionId: I64;
  volume: I64;
  filledVolume: I64;
  symbolId: I64;
  createTimestamp: I64;
  executionTimestamp: I64;
  utcLastUpdateTimestamp?: I64;
  executionPrice?: number;
  tradeSide: number;
  dealStatus: number;
  commission?: I64;
  closePositionDetail?: ClosePositionDetailMsg;
  moneyDigits?: number;
}

export interface ExecutionEventMsg {
  ctidTraderAccountId: I64;
  executionType: number;
  position?: PositionMsg;
  order?: OrderMsg;
  deal?: DealMsg;
  errorCode?: string;
  isServerEvent?: boolean;
}

export interface ReconcileResMsg {
  ctidTraderAccountId: I64;
  position?: PositionMsg[];
  order?: OrderMsg[];
}

export interface OrderListResMsg {
  ctidTraderAccountId: I64;
  order?: OrderMsg[];
  hasMore: boolean;
}

export interface SpotEventMsg {
  ctidTraderAccountId: I64;
  symbolId: I64;
  bid?: I64;
  ask?: I64;
  timestamp?: I64;
}

export interface UnrealizedPnLResMsg {
  ctidTraderAccountId: I64;
  positionUnrealizedPnL?: { positionId: I64; grossUnrealizedPnL: I64; netUnrealizedPnL: I64 }[];
  moneyDigits: number;
}

export interface TokenInvalidatedEventMsg {
  ctidTraderAccountIds?: I64[];
  reason?: string;
}

/** One decoded frame: the envelope plus its payload decoded by payloadType (null for types we do not model). */
export interface Envelope {
  payloadType: number;
  clientMsgId?: string;
  payload: Record<string, unknown> | null;
}
