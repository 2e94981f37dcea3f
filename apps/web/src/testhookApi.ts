/**
 * The shape of `window.__blkheat`, the test hook: owned by shared-types (testhook.ts) so that the
 * dashboard, its browser tests and e2e/lib all read one definition. Also what the hook's parts
 * (testhook*.ts) are handed besides the stores.
 */
import type { AgentClient } from './net/client.js';
import type { DataLayer } from './pipeline/dataLayer.js';

export type { BlkheatHook, HookCell, HookCompareRow, HookDiskCounts, HookRange } from '@blkheat/shared-types';

/** What the hook reads besides the stores, from app.ts. */
export interface TestHookSources {
  /** The agent client app.ts started (for its gap and reconnect counters). */
  readonly connection: Pick<AgentClient, 'gaps' | 'reconnects'>;
  /** The data layer (for the work under way and the live log's coverage). */
  readonly data: Pick<DataLayer, 'pending' | 'live'>;
}
