/**
 * What must be seen wherever the page is scrolled (issue 29): the live view's loudest incident
 * now, for the header's badge (the header stays at the top) and the tab's title. Judged on the
 * newest live frame, as a row's stuck badge is (stuck.ts), and on the agent's status: the oldest
 * stuck I/O or waiting bio of any disk, shown or not; else failed I/Os in the newest second; else
 * a history fault. Nothing for a snapshot (it is not now).
 */
import type { AgentStatus, Frame } from '@blkheat/shared-types';
import { faultsAt } from './faults.js';
import { formatCount } from './format.js';
import { formatLatency } from './latency.js';
import { stuckAgeS, stuckNow } from './stuck.js';

export interface PageAlert {
  readonly kind: 'stuck' | 'errors' | 'history';
  /** "stuck 12.3 s on loop0", "3 failed I/Os on loop0", "history not recorded". */
  readonly text: string;
}

export function pageAlert(
  lastFrame: Frame | undefined,
  mode: 'live' | 'snapshot',
  thresholdS: number,
  diskName: (dev: string) => string,
  status: AgentStatus | undefined,
): PageAlert | undefined {
  if (mode !== 'live') return undefined;
  let worst: { ageS: number; dev: string } | undefined;
  let failed: { n: number; dev: string } | undefined;
  for (const disk of lastFrame?.disks ?? []) {
    const s = stuckNow(disk, thresholdS);
    const ageS = s ? stuckAgeS(s) : 0;
    if (s && (!worst || ageS > worst.ageS)) worst = { ageS, dev: disk.dev };
    const n = lastFrame ? faultsAt([lastFrame], disk.dev, lastFrame.step, Math.floor(lastFrame.ts / lastFrame.step)).failed : 0;
    if (n > 0 && (!failed || n > failed.n)) failed = { n, dev: disk.dev };
  }
  if (worst) return { kind: 'stuck', text: `stuck ${formatLatency(worst.ageS)} on ${diskName(worst.dev)}` };
  if (failed) return { kind: 'errors', text: `${formatCount(failed.n)} failed I/O${failed.n === 1 ? '' : 's'} on ${diskName(failed.dev)}` };
  if (status?.historyFault) return { kind: 'history', text: 'history not recorded' };
  return undefined;
}

/** The tab's title: "⚠ stuck 12.3 s on loop0 · blkheat · host" while an alert stands. */
export function pageTitle(alert: PageAlert | undefined, hostname: string | undefined, snapshot: boolean): string {
  const base = hostname ? `blkheat · ${hostname}${snapshot ? ' (snapshot)' : ''}` : 'blkheat';
  return alert ? `⚠ ${alert.text} · ${base}` : base;
}
