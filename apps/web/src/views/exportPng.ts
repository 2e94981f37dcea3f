/** Export the visible heat maps as a PNG file. */
import { cgroupInForce } from '../model/cgroups.js';
import { formatDateTime, formatSpan } from '../model/format.js';
import { PERCENTILES_NOTE } from '../model/percentiles.js';
import { PHASE_WORDS } from '../model/phase.js';
import { snapshotFileName } from '../model/snapshot.js';
import { composePng } from '../render/png.js';
import { download, exportSummary } from '../store/actions.js';
import { useData } from '../store/pipelineStore.js';
import { shownQuantiles, windowKnown, windowScale } from '../store/shownWindow.js';
import { notify } from '../store/notices.js';
import { incidentMarks } from './incidents.js';
import { useUi } from '../store/uiStore.js';
import { paletteFor, renderTheme, resolvedTheme } from './theme.js';

export async function exportPng(): Promise<void> {
  const cur = useData.getState().window;
  const sum = exportSummary();
  const ui = useUi.getState();
  const d = useData.getState();
  if (!cur || !sum || cur.devs.length === 0) {
    notify('error', 'Nothing to export yet.');
    return;
  }
  const themeName = resolvedTheme(ui.theme);
  const host = d.mode === 'snapshot' ? d.snapshot?.host : ui.agent?.host;
  const names = new Map(d.disks.map((x) => [x.dev, x.name]));
  const canvas = composePng({
    title: `blkheat · ${host?.hostname ?? 'unknown host'}${d.mode === 'snapshot' ? ` · snapshot ${d.snapshot?.name ?? ''}` : ''}`,
    subtitle: `${formatDateTime(sum.from)} + ${formatSpan(sum.to - sum.from)} · ${PHASE_WORDS[ui.kind]} · ${cur.step} s columns · ${
      cgroupInForce(ui.cgroup, ui.kind, d.cgroupPhases) !== undefined
        ? `cgroup ${ui.cgroup}`
        : `${ui.classes.length > 0 ? ui.classes.join(', ') : 'all classes'}${ui.cgroup !== undefined ? ` · every cgroup (${PHASE_WORDS[ui.kind]} is not split by cgroup)` : ''}`
    } · ${PERCENTILES_NOTE} · ${host?.kernel ?? ''}`,
    from: d.visible.from,
    to: d.visible.to,
    uLo: cur.yLo,
    uHi: cur.yHi,
    schema: cur.schema,
    disks: cur.devs.flatMap((dev) => {
      const m = cur.matrices.get(dev);
      const h = sum.perDisk.get(dev);
      if (!m) return [];
      return [
        {
          title: `${names.get(dev) ?? dev} (${dev})`,
          matrix: m,
          track: cur.tracks.get(dev),
          histogram: {
            hist: h?.hist ?? [],
            total: h?.total ?? 0,
            quantiles: shownQuantiles({ summary: sum, rankSamples: d.rankSamples, schema: cur.schema }, dev),
            maxShare: sum.maxShare,
          },
          scale: windowScale(cur, dev, ui.norm) ?? cur.scale,
          incidents: incidentMarks(dev),
        },
      ];
    }),
    palette: paletteFor(themeName),
    perDisk: ui.norm === 'disk',
    scale: cur.scale,
    theme: renderTheme(themeName),
    percentiles: ui.percentiles,
    known: windowKnown(cur, ui.agent?.historyFrom),
  });
  const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/png'));
  if (!blob) {
    notify('error', 'Could not encode the image.');
    return;
  }
  download(blob, snapshotFileName(host?.hostname ?? 'host', sum.from, 'png'));
}
