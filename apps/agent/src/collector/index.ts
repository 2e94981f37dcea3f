/**
 * The collector's public face: what @blkheat/agent/collector exports (apps/agent/package.json).
 * The collector is laid out by job. Here, its lifecycle: collector.ts runs the per-second cycle
 * and loader.ts loads and attaches the kernel object; types.ts is all that server/ and service/
 * see of it, errors.ts its one error type. abi/ is the kernel ABI shared with
 * bpf/include/blkheat.h; decode/ turns what the kernel programs leave in their maps and ring
 * buffer into frames, samples, in-flight and untimed I/Os; host/ discovers the machine (devices,
 * disks in scope, cgroups, kernel facts, clock). abi/, decode/ and host/ never import the
 * lifecycle; abi/ and host/ never import decode/ (eslint.config.js).
 */
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
export { DeviceRegistry } from './host/devices.js';
export { checkDiskNames } from './host/disk-scope.js';
export { ClassNamer } from './decode/classes.js';
export { findIoHierarchy, type CgroupHierarchy } from './host/cgroups.js';
export { kernelFactsOf } from './host/kernel-facts.js';
export { parseDevString } from './abi/layout.js';
