export * from './buckets.js';
export * from './histogram.js';
export * from './opclass.js';
export * from './frame.js';
export * from './protocol.js';
export * from './snapshot.js';
export * from './schemas.js';
