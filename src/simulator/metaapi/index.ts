export { startMetaApiSimServer } from './server.js';
