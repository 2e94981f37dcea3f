/**
 * The raw exports of the native addon (build/Release/bpf_loader.node) and its loader. The
 * wrapped C++ classes implement the public interfaces of api.ts directly; this file only states
 * that contract and checks the module's shape when it is loaded.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { BpfObject, KernelBtf, OpenOptions, StatsHandle } from './api.js';
import type { BpfErrorDetails } from './errors.js';

/** The class the addon instantiates for every error (see errors.ts). */
export type BpfErrorConstructor = new (message: string, details: BpfErrorDetails) => Error;

export interface NativeAddon {
  /** Hands the BpfError class to the addon; called once, right after loading it. */
  init(errorClass: BpfErrorConstructor): void;
  openObject(path: string, options?: OpenOptions): BpfObject;
  loadKernelBtf(path?: string): KernelBtf;
  enableStats(): StatsHandle;
  possibleCpus(): number;
  libbpfVersion(): string;
  releaseFreeHeap(): boolean;
  switchUser(uid: number, gid: number): void;
}

/** dist/native.js and src/native.ts both sit one level below the package root. */
export const addonPath = fileURLToPath(new URL('../build/Release/bpf_loader.node', import.meta.url));

function isNativeAddon(value: unknown): value is NativeAddon {
  return (
    typeof value === 'object' &&
    value !== null &&
    'init' in value &&
    typeof value.init === 'function' &&
    'openObject' in value &&
    typeof value.openObject === 'function' &&
    'loadKernelBtf' in value &&
    typeof value.loadKernelBtf === 'function' &&
    'enableStats' in value &&
    typeof value.enableStats === 'function' &&
    'possibleCpus' in value &&
    typeof value.possibleCpus === 'function' &&
    'libbpfVersion' in value &&
    typeof value.libbpfVersion === 'function' &&
    'releaseFreeHeap' in value &&
    typeof value.releaseFreeHeap === 'function' &&
    'switchUser' in value &&
    typeof value.switchUser === 'function'
  );
}

export function loadNativeAddon(errorClass: BpfErrorConstructor): NativeAddon {
  const require = createRequire(import.meta.url);
  let loaded: unknown;
  try {
    loaded = require(addonPath);
  } catch (cause) {
    throw new Error(
      `@blkheat/bpf-loader: cannot load the native addon ${addonPath} (build it with: node packages/bpf-loader/scripts/build-addon.mjs)`,
      { cause },
    );
  }
  if (!isNativeAddon(loaded)) throw new Error(`@blkheat/bpf-loader: ${addonPath} does not export the expected functions`);
  loaded.init(errorClass);
  return loaded;
}
