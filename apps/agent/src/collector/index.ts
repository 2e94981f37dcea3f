export { createCollector } from './collector.js';
export { CollectorError } from './errors.js';
export { defaultObjectPath, selectPrograms } from './loader.js';
export type { Collector, CollectorListener, CollectorOptions, CollectorStats } from './types.js';
export { DeviceRegistry } from './devices.js';
export { ClassNamer } from './classes.js';
export { findIoHierarchy, type CgroupHierarchy } from './cgroups.js';
