export { MetaTraderAdapter, type MetaTraderAdapterOptions } from './adapter.js';
export { METATRADER_CAPABILITIES, metaTraderCapabilities, type MtPlatform } from './capabilities.js';
export { fitComment, MT_COMMENT_LIMIT } from './comment.js';
export { FailedCredentialMemo, provisionMtAccount, removeMtAccount, searchMtServers, type ProvisionedMtAccount } from './connect.js';
export { createMetaTraderAdapterFactory, parseMetaTraderCredentials, type MetaTraderCredentials } from './factory.js';
export { MetaApiGateway, type MetaTraderGateway } from './gateway.js';
