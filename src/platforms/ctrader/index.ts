export { CTraderAdapter, type CTraderAdapterOptions } from './adapter.js';
export { CTRADER_CAPABILITIES, CTRADER_TAG_MAX, ctraderCapabilities } from './capabilities.js';
export { CTraderConnection, type CTraderEndpoint, type ConnectionOptions } from './connection.js';
export { createCTraderAdapterFactory, parseCTraderCredentials, type CTraderCredentials, type CTraderFactoryOptions, type CTraderAdapterFactory } from './factory.js';
export {
  buildAuthorizationUrl,
  exchangeCode,
  refreshTokens,
  listAccountsForToken,
  verifyCTraderAccount,
  type CTraderAccountListing,
  type AccountListResult,
  type IssuedTokens,
} from './oauth.js';
export { TokenRefresher, type CTraderTokens } from './tokens.js';
