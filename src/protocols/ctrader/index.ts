export * from './payload-types.js';
export * from './enums.js';
export * from './messages.js';
export * from './codec.js';
export * from './framing.js';
