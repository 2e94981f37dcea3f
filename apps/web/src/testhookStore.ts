/**
 * The test hook's reads of the stores: the page's state (mode, view, window, filters, connection),
 * the compare view as computed, the drill-down selection and its samples, and the notices.
 */
import { ALL_CLASSES } from './model/compare.js';
import { useNotices } from './store/notices.js';
import { useData } from './store/pipelineStore.js';
import { useUi } from './store/uiStore.js';
import type { BlkheatHook, HookCompareRow, TestHookSources } from './testhookApi.js';
import { resolvedTheme } from './views/theme.js';

export function storeReads({
  connection,
  data,
}: TestHookSources): Pick<BlkheatHook, 'state' | 'compare' | 'selection' | 'samples' | 'notices'> {
  return {
    state() {
      const s = useUi.getState();
      const d = useData.getState();
      const sum = d.summary;
      const cur = d.window;
      return {
        mode: d.mode,
        connection: s.connection,
        following: d.visible.following,
        view: { from: d.visible.from, to: d.visible.to },
        summaryRange: sum ? { from: sum.from, to: sum.to } : undefined,
        step: cur?.step,
        schema: cur ? { ...cur.schema } : undefined,
        latencyWindow: cur ? { lo: cur.yLo, hi: cur.yHi } : undefined,
        window: cur ? { from: cur.from, to: cur.to } : undefined,
        shownDisks: [...d.shownDevs],
        classes: [...s.classes],
        cgroup: s.cgroup,
        kind: s.kind,
        colour: s.colour,
        norm: s.norm,
        lastFrameTs: d.lastFrameTs,
        liveCovered:
          data.live.coveredFrom !== undefined && data.live.coveredTo !== undefined
            ? { from: data.live.coveredFrom, to: data.live.coveredTo }
            : undefined,
        gaps: connection.gaps,
        reconnects: connection.reconnects,
        theme: resolvedTheme(s.theme),
      };
    },
    compare() {
      const st = useData.getState().compare;
      if (!st) return undefined;
      const disks: Record<string, Record<string, HookCompareRow>> = {};
      for (const d of st.disks) {
        const rows: Record<string, HookCompareRow> = {};
        for (const r of d.rows) {
          const percentiles: Record<string, { baseline: number | null; comparison: number | null; delta: number | null }> = {};
          for (const p of r.deltas)
            percentiles[p.label] = {
              baseline: p.baseline?.seconds ?? null,
              comparison: p.comparison?.seconds ?? null,
              delta: p.delta ?? null,
            };
          rows[r.c === ALL_CLASSES ? 'all' : r.c] = {
            baseline: [...r.baseline.hist],
            comparison: [...r.comparison.hist],
            baselineTotal: r.baseline.total,
            comparisonTotal: r.comparison.total,
            percentiles,
            difference: r.difference ? [...r.difference] : null,
          };
        }
        disks[d.dev] = rows;
      }
      return {
        status: st.status,
        error: st.error,
        followsView: st.choice.comparison === undefined,
        baseline: st.baseline ? { ...st.baseline } : undefined,
        comparison: st.comparison ? { ...st.comparison } : undefined,
        disks,
      };
    },
    selection() {
      const sel = useData.getState().selection;
      return sel
        ? {
            dev: sel.dev,
            from: sel.from,
            to: sel.to,
            bucketLo: sel.bucketLo,
            bucketHi: sel.bucketHi,
            sizeClass: sel.sizeClass,
            cgroup: sel.cgroup,
          }
        : undefined;
    },
    samples() {
      const s = useData.getState().samples;
      return { status: s.status, count: s.rows.length, truncated: s.truncated, error: s.error };
    },
    notices() {
      return useNotices.getState().notices.map((n) => ({ kind: n.kind, text: n.text }));
    },
  };
}
