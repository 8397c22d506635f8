export { startMetaApiSimServer, type MetaApiSimOptions, type MetaApiSimServer } from './server.js';
export { COMMENT_LIMIT } from './trade.js';
