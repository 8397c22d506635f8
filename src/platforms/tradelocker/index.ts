export { TradeLockerAdapter, type TradeLockerAdapterOptions } from './adapter.js';
export { TRADELOCKER_CAPABILITIES, tradeLockerCapabilities } from './capabilities.js';
export { discoverTradeLockerAccounts, verifyTradeLockerAccount, type TradeLockerAccountChoice } from './connect.js';
export { createTradeLockerAdapterFactory, parseTradeLockerCredentials, type TradeLockerCredentials } from './factory.js';
