export { startCTraderSimServer, type CTraderSimServer } from './server.js';
export type { TokenPair } from './tokens.js';
