/**
 * The test hook's reads of the render scheduler (render/scheduler.ts): `idle` waits until nothing
 * is fetched, summed or drawn; `renderStats` gives the frames drawn and each view's recent draw
 * durations.
 */
import { scheduler } from './render/scheduler.js';
import { useData } from './store/pipelineStore.js';
import type { BlkheatHook, TestHookSources } from './testhookApi.js';
import { TIME_AXIS_VIEW } from './views/TimeAxis.js';
import { diskViews } from './views/useDiskDrawing.js';

function frame(): Promise<void> {
  return new Promise((r) => requestAnimationFrame(() => r()));
}

export function renderReads({ data }: TestHookSources): Pick<BlkheatHook, 'idle' | 'renderStats'> {
  return {
    async idle(timeoutMs = 30_000) {
      const t0 = performance.now();
      let quiet = 0;
      // Two consecutive quiet frames: React commits and the redraws they cause settle too.
      while (quiet < 2) {
        await frame();
        const busy = data.pending > 0 || scheduler.busy;
        quiet = busy ? 0 : quiet + 1;
        if (performance.now() - t0 > timeoutMs) throw new Error(`blkheat: not idle after ${timeoutMs} ms (pending ${data.pending})`);
      }
    },
    renderStats() {
      const timings: Record<string, readonly number[]> = {};
      const draws: Record<string, number> = {};
      const disks = useData.getState().shownDevs.map(diskViews);
      for (const key of [TIME_AXIS_VIEW, ...disks.flatMap((k) => [k.heat, k.hist, k.overlay, k.tput])]) {
        timings[key] = scheduler.timingsOf(key);
        draws[key] = scheduler.drawsOf(key);
      }
      return { frames: scheduler.frames, timings, draws };
    },
  };
}
