export { startCTraderSimServer, type CTraderSimServer, type CTraderSimServerOptions, type CTraderSimEndpoint } from './server.js';
export type { TokenPair, Scope } from './tokens.js';
