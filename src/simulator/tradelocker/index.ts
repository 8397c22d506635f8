export { startTradeLockerSimServer, type TradeLockerSimOptions, type TradeLockerSimServer } from './server.js';
export { defaultRateLimits, RATE_LIMIT_TYPES, type RateLimitEntry } from './rate-limits.js';
