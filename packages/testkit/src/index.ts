export * from './diskstats.js';
export * from './loop.js';
export * from './privileges.js';
export * from './wsclient.js';
export * from './agentprocess.js';
export * from './promtext.js';
export * from './fuse.js';
export * from './workload.js';
