export { createCollector } from './collector.js';
export { CollectorError } from './errors.js';
export { defaultObjectPath, selectPrograms } from './loader.js';
export {
  DEFAULT_SAMPLE_BUDGET,
  MAX_SAMPLE_BUDGET,
  type Collector,
  type CollectorListener,
  type CollectorOptions,
  type CollectorStats,
} from './types.js';
export { DeviceRegistry } from './devices.js';
export { ClassNamer } from './classes.js';
export { findIoHierarchy, type CgroupHierarchy } from './cgroups.js';
export { kernelFactsOf } from './kernel-facts.js';
export { parseDevString } from './layout.js';
