export { startTradeLockerSimServer } from './server.js';
