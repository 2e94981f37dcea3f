/**
 * An hour of history for the live section, so that `?live=3600` shows a full one-hour window as
 * it would on an agent that has run for an hour, not a few seconds of data in an empty hour
 * (which would spare the page most of its work: backfill, summaries and drawing of 3,600 s).
 *
 * The frames are the agent's own: a first agent records the real load for a few seconds, and
 * those frames, repeated, fill the hour before now, written through the agent's HistoryStore
 * with its default options (so the 10 s and 60 s tiers are built as in production). The second
 * agent then starts on that data directory and continues live from it.
 */
import { chownSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame } from '@blkheat/shared-types';
import { HistoryStore } from '../../apps/agent/src/history/store.ts';
import { DEFAULTS } from '../../apps/agent/src/service/options.ts';

/** The frames the agent recorded over [from, to), at 1 s (GET /api/v1/range). */
export async function recordedFrames(agentUrl: string, from: number, to: number): Promise<Frame[]> {
  const u = new URL('api/v1/range', agentUrl);
  u.searchParams.set('from', String(from));
  u.searchParams.set('to', String(to));
  u.searchParams.set('step', '1');
  const res = await fetch(u);
  if (res.status !== 200) throw new Error(`GET ${u.pathname}${u.search}: HTTP ${res.status} ${await res.text()}`);
  const answer = (await res.json()) as { step: number; frames: Frame[] };
  if (answer.step !== 1) throw new Error(`the agent answered at step ${answer.step}, not 1 s`);
  return answer.frames.filter((f) => f.disks.length > 0);
}

/**
 * Replaces the history in `historyDir` with `seconds` of frames ending at the current second:
 * `frames` repeated in order. Files written keep the directory's owner (the agent's --user must
 * be able to write them). Returns the range written and its size on disk.
 */
export function seedHistory(historyDir: string, frames: readonly Frame[], seconds: number): { from: number; to: number; bytes: number } {
  if (frames.length === 0) throw new Error('no recorded frames to seed the history with');
  const { uid, gid } = statSync(historyDir);
  // The first agent's few seconds go: a store appends only after its newest second.
  for (const name of readdirSync(historyDir)) rmSync(join(historyDir, name), { recursive: true, force: true });
  const to = Math.floor(Date.now() / 1000);
  const from = to - seconds;
  let clock = from;
  const store = HistoryStore.open({
    dir: historyDir,
    historySeconds: DEFAULTS.historySeconds,
    maxBytes: DEFAULTS.maxHistoryBytes,
    now: () => clock,
  });
  try {
    for (let ts = from; ts < to; ts++) {
      clock = ts + 1;
      const f = frames[(ts - from) % frames.length] as Frame;
      store.append({ ...f, ts, step: 1 });
    }
    store.enforceBounds();
  } finally {
    store.close();
  }
  let bytes = 0;
  const own = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      chownSync(p, uid, gid);
      if (e.isDirectory()) own(p);
      else bytes += statSync(p).size;
    }
  };
  own(historyDir);
  return { from, to, bytes };
}
