export { createCollector, CollectorError, defaultObjectPath, selectPrograms } from './collector.js';
export type { Collector, CollectorListener, CollectorOptions, CollectorStats } from './types.js';
export { DeviceRegistry } from './devices.js';
export { ClassNamer } from './classes.js';
