/**
 * The shape of `window.__blkheat`, the test hook: owned by shared-types (testhook.ts) so that the
 * dashboard, its browser tests and e2e/lib all read one definition.
 */
export type { BlkheatHook, HookCell, HookCompareRow, HookDiskCounts, HookRange } from '@blkheat/shared-types';
