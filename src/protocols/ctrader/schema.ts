/**
 * The Open API messages we use, written from the fact sheet (docs/platforms/platform-c-ctrader.md §2-§5), not copied
 * from Spotware's files: the HEAD protos do not compile strictly (§0) and we need only a subset. Field numbers,
 * labels and payload type numbers follow the fact sheet. Enums the fact sheet does not enumerate
 * (ProtoOADayOfWeek, commission types, ...) are declared int32: same varint on the wire, no invented values.
 * Both the simulator front end and the adapter parse this one text.
 */
export const CTRADER_PROTO = `
syntax = "proto2";

enum ProtoPayloadType {
  PROTO_MESSAGE = 5;
  ERROR_RES = 50;
  HEARTBEAT_EVENT = 51;
}

enum ProtoOAPayloadType {
  PROTO_OA_APPLICATION_AUTH_REQ = 2100;
  PROTO_OA_APPLICATION_AUTH_RES = 2101;
  PROTO_OA_ACCOUNT_AUTH_REQ = 2102;
  PROTO_OA_ACCOUNT_AUTH_RES = 2103;
  PROTO_OA_VERSION_REQ = 2104;
  PROTO_OA_VERSION_RES = 2105;
  PROTO_OA_NEW_ORDER_REQ = 2106;
  PROTO_OA_TRAILING_SL_CHANGED_EVENT = 2107;
  PROTO_OA_CANCEL_ORDER_REQ = 2108;
  PROTO_OA_AMEND_ORDER_REQ = 2109;
  PROTO_OA_AMEND_POSITION_SLTP_REQ = 2110;
  PROTO_OA_CLOSE_POSITION_REQ = 2111;
  PROTO_OA_ASSET_LIST_REQ = 2112;
  PROTO_OA_ASSET_LIST_RES = 2113;
  PROTO_OA_SYMBOLS_LIST_REQ = 2114;
  PROTO_OA_SYMBOLS_LIST_RES = 2115;
  PROTO_OA_SYMBOL_BY_ID_REQ = 2116;
  PROTO_OA_SYMBOL_BY_ID_RES = 2117;
  PROTO_OA_SYMBOLS_FOR_CONVERSION_REQ = 2118;
  PROTO_OA_SYMBOLS_FOR_CONVERSION_RES = 2119;
  PROTO_OA_SYMBOL_CHANGED_EVENT = 2120;
  PROTO_OA_TRADER_REQ = 2121;
  PROTO_OA_TRADER_RES = 2122;
  PROTO_OA_TRADER_UPDATE_EVENT = 2123;
  PROTO_OA_RECONCILE_REQ = 2124;
  PROTO_OA_RECONCILE_RES = 2125;
  PROTO_OA_EXECUTION_EVENT = 2126;
  PROTO_OA_SUBSCRIBE_SPOTS_REQ = 2127;
  PROTO_OA_SUBSCRIBE_SPOTS_RES = 2128;
  PROTO_OA_UNSUBSCRIBE_SPOTS_REQ = 2129;
  PROTO_OA_UNSUBSCRIBE_SPOTS_RES = 2130;
  PROTO_OA_SPOT_EVENT = 2131;
  PROTO_OA_ORDER_ERROR_EVENT = 2132;
  PROTO_OA_DEAL_LIST_REQ = 2133;
  PROTO_OA_DEAL_LIST_RES = 2134;
  PROTO_OA_SUBSCRIBE_LIVE_TRENDBAR_REQ = 2135;
  PROTO_OA_UNSUBSCRIBE_LIVE_TRENDBAR_REQ = 2136;
  PROTO_OA_GET_TRENDBARS_REQ = 2137;
  PROTO_OA_GET_TRENDBARS_RES = 2138;
  PROTO_OA_EXPECTED_MARGIN_REQ = 2139;
  PROTO_OA_EXPECTED_MARGIN_RES = 2140;
  PROTO_OA_MARGIN_CHANGED_EVENT = 2141;
  PROTO_OA_ERROR_RES = 2142;
  PROTO_OA_CASH_FLOW_HISTORY_LIST_REQ = 2143;
  PROTO_OA_CASH_FLOW_HISTORY_LIST_RES = 2144;
  PROTO_OA_GET_TICKDATA_REQ = 2145;
  PROTO_OA_GET_TICKDATA_RES = 2146;
  PROTO_OA_ACCOUNTS_TOKEN_INVALIDATED_EVENT = 2147;
  PROTO_OA_CLIENT_DISCONNECT_EVENT = 2148;
  PROTO_OA_GET_ACCOUNTS_BY_ACCESS_TOKEN_REQ = 2149;
  PROTO_OA_GET_ACCOUNTS_BY_ACCESS_TOKEN_RES = 2150;
  PROTO_OA_GET_CTID_PROFILE_BY_TOKEN_REQ = 2151;
  PROTO_OA_GET_CTID_PROFILE_BY_TOKEN_RES = 2152;
  PROTO_OA_ASSET_CLASS_LIST_REQ = 2153;
  PROTO_OA_ASSET_CLASS_LIST_RES = 2154;
  PROTO_OA_DEPTH_EVENT = 2155;
  PROTO_OA_SUBSCRIBE_DEPTH_QUOTES_REQ = 2156;
  PROTO_OA_SUBSCRIBE_DEPTH_QUOTES_RES = 2157;
  PROTO_OA_UNSUBSCRIBE_DEPTH_QUOTES_REQ = 2158;
  PROTO_OA_UNSUBSCRIBE_DEPTH_QUOTES_RES = 2159;
  PROTO_OA_SYMBOL_CATEGORY_REQ = 2160;
  PROTO_OA_SYMBOL_CATEGORY_RES = 2161;
  PROTO_OA_ACCOUNT_LOGOUT_REQ = 2162;
  PROTO_OA_ACCOUNT_LOGOUT_RES = 2163;
  PROTO_OA_ACCOUNT_DISCONNECT_EVENT = 2164;
  PROTO_OA_SUBSCRIBE_LIVE_TRENDBAR_RES = 2165;
  PROTO_OA_UNSUBSCRIBE_LIVE_TRENDBAR_RES = 2166;
  PROTO_OA_MARGIN_CALL_LIST_REQ = 2167;
  PROTO_OA_MARGIN_CALL_LIST_RES = 2168;
  PROTO_OA_MARGIN_CALL_UPDATE_REQ = 2169;
  PROTO_OA_MARGIN_CALL_UPDATE_RES = 2170;
  PROTO_OA_MARGIN_CALL_UPDATE_EVENT = 2171;
  PROTO_OA_MARGIN_CALL_TRIGGER_EVENT = 2172;
  PROTO_OA_REFRESH_TOKEN_REQ = 2173;
  PROTO_OA_REFRESH_TOKEN_RES = 2174;
  PROTO_OA_ORDER_LIST_REQ = 2175;
  PROTO_OA_ORDER_LIST_RES = 2176;
  PROTO_OA_GET_DYNAMIC_LEVERAGE_REQ = 2177;
  PROTO_OA_GET_DYNAMIC_LEVERAGE_RES = 2178;
  PROTO_OA_DEAL_LIST_BY_POSITION_ID_REQ = 2179;
  PROTO_OA_DEAL_LIST_BY_POSITION_ID_RES = 2180;
  PROTO_OA_ORDER_DETAILS_REQ = 2181;
  PROTO_OA_ORDER_DETAILS_RES = 2182;
  PROTO_OA_ORDER_LIST_BY_POSITION_ID_REQ = 2183;
  PROTO_OA_ORDER_LIST_BY_POSITION_ID_RES = 2184;
  PROTO_OA_DEAL_OFFSET_LIST_REQ = 2185;
  PROTO_OA_DEAL_OFFSET_LIST_RES = 2186;
  PROTO_OA_GET_POSITION_UNREALIZED_PNL_REQ = 2187;
  PROTO_OA_GET_POSITION_UNREALIZED_PNL_RES = 2188;
}

enum ProtoOAOrderType { MARKET = 1; LIMIT = 2; STOP = 3; STOP_LOSS_TAKE_PROFIT = 4; MARKET_RANGE = 5; STOP_LIMIT = 6; }
enum ProtoOATradeSide { BUY = 1; SELL = 2; }
enum ProtoOATimeInForce { GOOD_TILL_DATE = 1; GOOD_TILL_CANCEL = 2; IMMEDIATE_OR_CANCEL = 3; FILL_OR_KILL = 4; MARKET_ON_OPEN = 5; }
enum ProtoOAExecutionType {
  ORDER_ACCEPTED = 2; ORDER_FILLED = 3; ORDER_REPLACED = 4; ORDER_CANCELLED = 5; ORDER_EXPIRED = 6; ORDER_REJECTED = 7;
  ORDER_CANCEL_REJECTED = 8; SWAP = 9; DEPOSIT_WITHDRAW = 10; ORDER_PARTIAL_FILL = 11; BONUS_DEPOSIT_WITHDRAW = 12;
}
enum ProtoOAPositionStatus { POSITION_STATUS_OPEN = 1; POSITION_STATUS_CLOSED = 2; POSITION_STATUS_CREATED = 3; POSITION_STATUS_ERROR = 4; }
enum ProtoOAOrderStatus { ORDER_STATUS_ACCEPTED = 1; ORDER_STATUS_FILLED = 2; ORDER_STATUS_REJECTED = 3; ORDER_STATUS_EXPIRED = 4; ORDER_STATUS_CANCELLED = 5; }
enum ProtoOADealStatus { FILLED = 2; PARTIALLY_FILLED = 3; REJECTED = 4; INTERNALLY_REJECTED = 5; ERROR = 6; MISSED = 7; }
enum ProtoOAAccountType { HEDGED = 0; NETTED = 1; SPREAD_BETTING = 2; }
enum ProtoOAAccessRights { FULL_ACCESS = 0; CLOSE_ONLY = 1; NO_TRADING = 2; NO_LOGIN = 3; }
enum ProtoOAOrderTriggerMethod { TRADE = 1; OPPOSITE = 2; DOUBLE_TRADE = 3; DOUBLE_OPPOSITE = 4; }
enum ProtoOAClientPermissionScope { SCOPE_VIEW = 0; SCOPE_TRADE = 1; }
enum ProtoOATradingMode { ENABLED = 0; DISABLED_WITHOUT_PENDINGS_EXECUTION = 1; DISABLED_WITH_PENDINGS_EXECUTION = 2; CLOSE_ONLY_MODE = 3; }
enum ProtoOASymbolDistanceType { SYMBOL_DISTANCE_IN_POINTS = 1; SYMBOL_DISTANCE_IN_PERCENTAGE = 2; }

message ProtoMessage {
  required uint32 payloadType = 1;
  optional bytes payload = 2;
  optional string clientMsgId = 3;
}

message ProtoErrorRes {
  optional ProtoPayloadType payloadType = 1 [default = ERROR_RES];
  required string errorCode = 2;
  optional string description = 3;
  optional uint64 maintenanceEndTimestamp = 4;
}

message ProtoHeartbeatEvent {
  optional ProtoPayloadType payloadType = 1 [default = HEARTBEAT_EVENT];
}

message ProtoOAApplicationAuthReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_APPLICATION_AUTH_REQ];
  required string clientId = 2;
  required string clientSecret = 3;
}
message ProtoOAApplicationAuthRes {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_APPLICATION_AUTH_RES];
}

message ProtoOAAccountAuthReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_ACCOUNT_AUTH_REQ];
  required int64 ctidTraderAccountId = 2;
  required string accessToken = 3;
}
message ProtoOAAccountAuthRes {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_ACCOUNT_AUTH_RES];
  required int64 ctidTraderAccountId = 2;
}

message ProtoOAVersionReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_VERSION_REQ];
}
message ProtoOAVersionRes {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_VERSION_RES];
  required string version = 2;
}

message ProtoOAGetAccountListByAccessTokenReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_GET_ACCOUNTS_BY_ACCESS_TOKEN_REQ];
  required string accessToken = 2;
}
message ProtoOACtidTraderAccount {
  required uint64 ctidTraderAccountId = 1;
  optional bool isLive = 2;
  optional int64 traderLogin = 3;
  optional int64 lastClosingDealTimestamp = 4;
  optional int64 lastBalanceUpdateTimestamp = 5;
  optional string brokerTitleShort = 6;
}
message ProtoOAGetAccountListByAccessTokenRes {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_GET_ACCOUNTS_BY_ACCESS_TOKEN_RES];
  required string accessToken = 2;
  optional ProtoOAClientPermissionScope permissionScope = 3;
  repeated ProtoOACtidTraderAccount ctidTraderAccount = 4;
}

message ProtoOARefreshTokenReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_REFRESH_TOKEN_REQ];
  required string refreshToken = 2;
}
message ProtoOARefreshTokenRes {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_REFRESH_TOKEN_RES];
  required string accessToken = 2;
  required string tokenType = 3;
  required int64 expiresIn = 4;
  required string refreshToken = 5;
}

message ProtoOAErrorRes {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_ERROR_RES];
  optional int64 ctidTraderAccountId = 2;
  required string errorCode = 3;
  optional string description = 4;
  optional int64 maintenanceEndTimestamp = 5;
  optional uint64 retryAfter = 6;
}

message ProtoOAOrderErrorEvent {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_ORDER_ERROR_EVENT];
  required string errorCode = 2;
  optional int64 orderId = 3;
  required int64 ctidTraderAccountId = 5;
  optional int64 positionId = 6;
  optional string description = 7;
}

message ProtoOAAccountsTokenInvalidatedEvent {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_ACCOUNTS_TOKEN_INVALIDATED_EVENT];
  repeated int64 ctidTraderAccountIds = 2;
  optional string reason = 3;
}

message ProtoOAClientDisconnectEvent {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_CLIENT_DISCONNECT_EVENT];
  optional string reason = 2;
}

message ProtoOAAccountDisconnectEvent {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_ACCOUNT_DISCONNECT_EVENT];
  required int64 ctidTraderAccountId = 2;
}

message ProtoOATraderReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_TRADER_REQ];
  required int64 ctidTraderAccountId = 2;
}
message ProtoOATrader {
  required int64 ctidTraderAccountId = 1;
  required int64 balance = 2;
  optional int64 balanceVersion = 3;
  optional int64 managerBonus = 4;
  optional int64 ibBonus = 5;
  optional int64 nonWithdrawableBonus = 6;
  optional ProtoOAAccessRights accessRights = 7 [default = FULL_ACCESS];
  required int64 depositAssetId = 8;
  optional bool swapFree = 9;
  optional uint32 leverageInCents = 10;
  optional int32 totalMarginCalculationType = 11;
  optional uint32 maxLeverage = 12;
  optional bool frenchRisk = 13 [deprecated = true];
  optional int64 traderLogin = 14;
  optional ProtoOAAccountType accountType = 15 [default = HEDGED];
  optional string brokerName = 16;
  optional int64 registrationTimestamp = 17;
  optional bool isLimitedRisk = 18;
  optional int32 limitedRiskMarginCalculationStrategy = 19;
  optional uint32 moneyDigits = 20;
  optional bool fairStopOut = 21;
  optional int32 stopOutStrategy = 22;
}
message ProtoOATraderRes {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_TRADER_RES];
  required int64 ctidTraderAccountId = 2;
  required ProtoOATrader trader = 3;
}

message ProtoOAAssetListReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_ASSET_LIST_REQ];
  required int64 ctidTraderAccountId = 2;
}
message ProtoOAAsset {
  required int64 assetId = 1;
  required string name = 2;
  optional string displayName = 3;
  optional int32 digits = 4;
}
message ProtoOAAssetListRes {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_ASSET_LIST_RES];
  required int64 ctidTraderAccountId = 2;
  repeated ProtoOAAsset asset = 3;
}

message ProtoOASymbolsListReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_SYMBOLS_LIST_REQ];
  required int64 ctidTraderAccountId = 2;
  optional bool includeArchivedSymbols = 3 [default = false];
}
message ProtoOALightSymbol {
  required int64 symbolId = 1;
  optional string symbolName = 2;
  optional bool enabled = 3;
  optional int64 baseAssetId = 4;
  optional int64 quoteAssetId = 5;
  optional int64 symbolCategoryId = 6;
  optional string description = 7;
  optional double sortingNumber = 8;
}
message ProtoOAArchivedSymbol {
  required int64 symbolId = 1;
  required string name = 2;
  required int64 utcLastUpdateTimestamp = 3;
  optional string description = 4;
}
message ProtoOASymbolsListRes {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_SYMBOLS_LIST_RES];
  required int64 ctidTraderAccountId = 2;
  repeated ProtoOALightSymbol symbol = 3;
  repeated ProtoOAArchivedSymbol archivedSymbol = 4;
}

message ProtoOASymbolByIdReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_SYMBOL_BY_ID_REQ];
  required int64 ctidTraderAccountId = 2;
  repeated int64 symbolId = 3;
}
message ProtoOAInterval {
  required uint32 startSecond = 3;
  required uint32 endSecond = 4;
}
message ProtoOASymbol {
  required int64 symbolId = 1;
  required int32 digits = 2;
  required int32 pipPosition = 3;
  optional bool enableShortSelling = 4;
  optional bool guaranteedStopLoss = 5;
  optional int32 swapRollover3Days = 6;
  optional double swapLong = 7;
  optional double swapShort = 8;
  optional int64 maxVolume = 9;
  optional int64 minVolume = 10;
  optional int64 stepVolume = 11;
  optional uint64 maxExposure = 12;
  repeated ProtoOAInterval schedule = 13;
  optional int64 commission = 14 [deprecated = true];
  optional int32 commissionType = 15;
  optional uint32 slDistance = 16;
  optional uint32 tpDistance = 17;
  optional uint32 gslDistance = 18;
  optional int64 gslCharge = 19;
  optional ProtoOASymbolDistanceType distanceSetIn = 20 [default = SYMBOL_DISTANCE_IN_POINTS];
  optional int64 minCommission = 21 [deprecated = true];
  optional int32 minCommissionType = 22;
  optional string minCommissionAsset = 23 [default = "USD"];
  optional int64 rolloverCommission = 24;
  optional int32 skipRolloverDays = 25;
  optional string scheduleTimeZone = 26;
  optional ProtoOATradingMode tradingMode = 27 [default = ENABLED];
  optional int32 rolloverCommission3Days = 28;
  optional int32 swapCalculationType = 29;
  optional int64 lotSize = 30;
  optional int64 preciseTradingCommissionRate = 31;
  optional int64 preciseMinCommission = 32;
  optional int32 pnlConversionFeeRate = 34;
  optional int64 leverageId = 35;
  optional int32 swapPeriod = 36;
  optional int32 swapTime = 37;
  optional int32 skipSWAPPeriods = 38;
  optional bool chargeSwapAtWeekends = 39;
  optional string measurementUnits = 40;
}
message ProtoOASymbolByIdRes {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_SYMBOL_BY_ID_RES];
  required int64 ctidTraderAccountId = 2;
  repeated ProtoOASymbol symbol = 3;
  repeated ProtoOAArchivedSymbol archivedSymbol = 4;
}

message ProtoOATradeData {
  required int64 symbolId = 1;
  required int64 volume = 2;
  required ProtoOATradeSide tradeSide = 3;
  optional int64 openTimestamp = 4;
  optional string label = 5;
  optional bool guaranteedStopLoss = 6;
  optional string comment = 7;
  optional string measurementUnits = 8;
  optional uint64 closeTimestamp = 9;
}
message ProtoOAPosition {
  required int64 positionId = 1;
  required ProtoOATradeData tradeData = 2;
  required ProtoOAPositionStatus positionStatus = 3;
  required int64 swap = 4;
  optional double price = 5;
  optional double stopLoss = 6;
  optional double takeProfit = 7;
  optional int64 utcLastUpdateTimestamp = 8;
  optional int64 commission = 9;
  optional double marginRate = 10;
  optional int64 mirroringCommission = 11;
  optional bool guaranteedStopLoss = 12;
  optional uint64 usedMargin = 13;
  optional ProtoOAOrderTriggerMethod stopLossTriggerMethod = 14 [default = TRADE];
  optional uint32 moneyDigits = 15;
  optional bool trailingStopLoss = 16;
}
message ProtoOAOrder {
  required int64 orderId = 1;
  required ProtoOATradeData tradeData = 2;
  required ProtoOAOrderType orderType = 3;
  required ProtoOAOrderStatus orderStatus = 4;
  optional int64 expirationTimestamp = 6;
  optional double executionPrice = 7;
  optional int64 executedVolume = 8;
  optional int64 utcLastUpdateTimestamp = 9;
  optional double baseSlippagePrice = 10;
  optional int64 slippageInPoints = 11;
  optional bool closingOrder = 12;
  optional double limitPrice = 13;
  optional double stopPrice = 14;
  optional double stopLoss = 15;
  optional double takeProfit = 16;
  optional string clientOrderId = 17;
  optional ProtoOATimeInForce timeInForce = 18 [default = IMMEDIATE_OR_CANCEL];
  optional int64 positionId = 19;
  optional int64 relativeStopLoss = 20;
  optional int64 relativeTakeProfit = 21;
  optional bool isStopOut = 22;
  optional bool trailingStopLoss = 23;
  optional ProtoOAOrderTriggerMethod stopTriggerMethod = 24 [default = TRADE];
}

message ProtoOAReconcileReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_RECONCILE_REQ];
  required int64 ctidTraderAccountId = 2;
  optional bool returnProtectionOrders = 3;
}
message ProtoOAReconcileRes {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_RECONCILE_RES];
  required int64 ctidTraderAccountId = 2;
  repeated ProtoOAPosition position = 3;
  repeated ProtoOAOrder order = 4;
}

message ProtoOANewOrderReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_NEW_ORDER_REQ];
  required int64 ctidTraderAccountId = 2;
  required int64 symbolId = 3;
  required ProtoOAOrderType orderType = 4;
  required ProtoOATradeSide tradeSide = 5;
  required int64 volume = 6;
  optional double limitPrice = 7;
  optional double stopPrice = 8;
  optional ProtoOATimeInForce timeInForce = 9 [default = GOOD_TILL_CANCEL];
  optional int64 expirationTimestamp = 10;
  optional double stopLoss = 11;
  optional double takeProfit = 12;
  optional string comment = 13;
  optional double baseSlippagePrice = 14;
  optional int32 slippageInPoints = 15;
  optional string label = 16;
  optional int64 positionId = 17;
  optional string clientOrderId = 18;
  optional int64 relativeStopLoss = 19;
  optional int64 relativeTakeProfit = 20;
  optional bool guaranteedStopLoss = 21;
  optional bool trailingStopLoss = 22;
  optional ProtoOAOrderTriggerMethod stopTriggerMethod = 23 [default = TRADE];
}

message ProtoOAClosePositionReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_CLOSE_POSITION_REQ];
  required int64 ctidTraderAccountId = 2;
  required int64 positionId = 3;
  required int64 volume = 4;
}

message ProtoOAAmendPositionSLTPReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_AMEND_POSITION_SLTP_REQ];
  required int64 ctidTraderAccountId = 2;
  required int64 positionId = 3;
  optional double stopLoss = 4;
  optional double takeProfit = 5;
  optional bool guaranteedStopLoss = 7;
  optional bool trailingStopLoss = 8;
  optional ProtoOAOrderTriggerMethod stopLossTriggerMethod = 9 [default = TRADE];
}

message ProtoOACancelOrderReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_CANCEL_ORDER_REQ];
  required int64 ctidTraderAccountId = 2;
  required int64 orderId = 3;
}

message ProtoOAAmendOrderReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_AMEND_ORDER_REQ];
  required int64 ctidTraderAccountId = 2;
  required int64 orderId = 3;
  optional int64 volume = 4;
  optional double limitPrice = 5;
  optional double stopPrice = 6;
  optional int64 expirationTimestamp = 7;
  optional double stopLoss = 8;
  optional double takeProfit = 9;
  optional int32 slippageInPoints = 10;
  optional int64 relativeStopLoss = 11;
  optional int64 relativeTakeProfit = 12;
  optional bool guaranteedStopLoss = 13;
  optional bool trailingStopLoss = 14;
  optional ProtoOAOrderTriggerMethod stopTriggerMethod = 15 [default = TRADE];
}

message ProtoOAClosePositionDetail {
  required double entryPrice = 1;
  required int64 grossProfit = 2;
  required int64 swap = 3;
  required int64 commission = 4;
  required int64 balance = 5;
  optional double quoteToDepositConversionRate = 6;
  optional int64 closedVolume = 7;
  optional int64 balanceVersion = 8;
  optional uint32 moneyDigits = 9;
  optional int64 pnlConversionFee = 10;
}
message ProtoOADeal {
  required int64 dealId = 1;
  required int64 orderId = 2;
  required int64 positionId = 3;
  required int64 volume = 4;
  required int64 filledVolume = 5;
  required int64 symbolId = 6;
  required int64 createTimestamp = 7;
  required int64 executionTimestamp = 8;
  optional int64 utcLastUpdateTimestamp = 9;
  optional double executionPrice = 10;
  required ProtoOATradeSide tradeSide = 11;
  required ProtoOADealStatus dealStatus = 12;
  optional double marginRate = 13;
  optional int64 commission = 14;
  optional double baseToUsdConversionRate = 15;
  optional ProtoOAClosePositionDetail closePositionDetail = 16;
  optional uint32 moneyDigits = 17;
}
message ProtoOADepositWithdraw {
  required int32 operationType = 1;
  required int64 balanceHistoryId = 2;
  required int64 balance = 3;
  required int64 delta = 4;
  required int64 changeBalanceTimestamp = 5;
  optional string externalNote = 6;
  optional int64 balanceVersion = 7;
  optional int64 equity = 8;
  optional uint32 moneyDigits = 9;
}
message ProtoOAExecutionEvent {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_EXECUTION_EVENT];
  required int64 ctidTraderAccountId = 2;
  required ProtoOAExecutionType executionType = 3;
  optional ProtoOAPosition position = 4;
  optional ProtoOAOrder order = 5;
  optional ProtoOADeal deal = 6;
  optional ProtoOADepositWithdraw depositWithdraw = 8;
  optional string errorCode = 9;
  optional bool isServerEvent = 10;
}

message ProtoOADealListReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_DEAL_LIST_REQ];
  required int64 ctidTraderAccountId = 2;
  optional int64 fromTimestamp = 3;
  optional int64 toTimestamp = 4;
  optional int32 maxRows = 5;
}
message ProtoOADealListRes {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_DEAL_LIST_RES];
  required int64 ctidTraderAccountId = 2;
  repeated ProtoOADeal deal = 3;
  required bool hasMore = 4;
}

message ProtoOAOrderListReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_ORDER_LIST_REQ];
  required int64 ctidTraderAccountId = 2;
  optional int64 fromTimestamp = 3;
  optional int64 toTimestamp = 4;
}
message ProtoOAOrderListRes {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_ORDER_LIST_RES];
  required int64 ctidTraderAccountId = 2;
  repeated ProtoOAOrder order = 3;
  required bool hasMore = 4;
}

message ProtoOASubscribeSpotsReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_SUBSCRIBE_SPOTS_REQ];
  required int64 ctidTraderAccountId = 2;
  repeated int64 symbolId = 3;
  optional bool subscribeToSpotTimestamp = 4;
}
message ProtoOASubscribeSpotsRes {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_SUBSCRIBE_SPOTS_RES];
  required int64 ctidTraderAccountId = 2;
}
message ProtoOAUnsubscribeSpotsReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_UNSUBSCRIBE_SPOTS_REQ];
  required int64 ctidTraderAccountId = 2;
  repeated int64 symbolId = 3;
}
message ProtoOAUnsubscribeSpotsRes {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_UNSUBSCRIBE_SPOTS_RES];
  required int64 ctidTraderAccountId = 2;
}
message ProtoOASpotEvent {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_SPOT_EVENT];
  required int64 ctidTraderAccountId = 2;
  required int64 symbolId = 3;
  optional uint64 bid = 4;
  optional uint64 ask = 5;
  optional uint64 sessionClose = 7;
  optional int64 timestamp = 8;
}

message ProtoOAGetPositionUnrealizedPnLReq {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_GET_POSITION_UNREALIZED_PNL_REQ];
  required int64 ctidTraderAccountId = 2;
}
message ProtoOAPositionUnrealizedPnL {
  required int64 positionId = 1;
  required int64 grossUnrealizedPnL = 2;
  required int64 netUnrealizedPnL = 3;
}
message ProtoOAGetPositionUnrealizedPnLRes {
  optional ProtoOAPayloadType payloadType = 1 [default = PROTO_OA_GET_POSITION_UNREALIZED_PNL_RES];
  required int64 ctidTraderAccountId = 2;
  repeated ProtoOAPositionUnrealizedPnL positionUnrealizedPnL = 3;
  required uint32 moneyDigits = 4;
}
`;
