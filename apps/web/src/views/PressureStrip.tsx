/**
 * The host's I/O pressure strip (render/pressure.ts), one for the page, under the shared time
 * axis and above the disks' heat maps, in their plot column (the same grid as a disk row's body,
 * styles/disk-rows.css: the same width and x mapping).
 * Only there when the data window has pressure (protocol 4 `Frame.psi`): data without it (older
 * agents, a kernel without PSI, snapshots from before it, the fleet view) takes no space. Each
 * draw with data records what it drew in the scheduler's registry, for the test hook.
 * With a cgroup filter on, a second strip under it draws that cgroup's pressure (`Frame.cg_psi`),
 * where the data has it.
 */
import { useEffect, useRef } from 'react';
import { cgroupPressureSource, hasPressure, PRESSURE_SOURCE, pressureSeries, type PressureSeries } from '../model/pressure.js';
import { renderContext } from '../render/contract.js';
import { paintPressure } from '../render/pressure.js';
import { type DrawFn, DrawnKind, scheduler } from '../render/scheduler.js';
import { useData } from '../store/pipelineStore.js';
import { useHover, useUi } from '../store/uiStore.js';
import { renderTheme, resolvedTheme } from './theme.js';
import { type Size, useElementSize } from './useElementSize.js';
import { visibleColumns } from './visibleColumns.js';

/** The strip's scheduler key (the host's; a cgroup's strip is CGROUP_PRESSURE_VIEW). */
export const PRESSURE_VIEW = 'pressure';
export const CGROUP_PRESSURE_VIEW = 'pressure:cgroup';
/** Its height, CSS px. */
export const PRESSURE_HEIGHT = 28;

export interface DrawnPressure {
  readonly series: PressureSeries;
  /** The top of its scale (a share). */
  readonly scale: number;
}

export const PRESSURE_DRAWN = new DrawnKind<DrawnPressure, HTMLCanvasElement>('pressure');

/** A draw function for the strip on `canvas()`, `size()` CSS px: the visible columns of the current window, the host's or `cgroup`'s. */
function pressureDraw(canvas: () => HTMLCanvasElement | null, size: () => Size, cgroup: string | undefined): DrawFn {
  let key = '';
  let series: PressureSeries | undefined;
  return (record) => {
    const el = canvas();
    const { width, height } = size();
    const d = useData.getState();
    const cur = d.window;
    if (!el || !cur || width <= 0 || height <= 0) return;
    const cols = visibleColumns();
    if (cols && cols.key !== key) {
      key = cols.key;
      series = pressureSeries(cur.frames, cur.step, cols.col0, cols.col1, cgroup);
    }
    const ui = useUi.getState();
    const hv = useHover.getState();
    const rc = renderContext({ from: d.visible.from, to: d.visible.to, uLo: 0, uHi: 1, width, height, dpr: ui.dpr }, cur.step);
    const cursor = hv.t !== undefined && !hv.drag ? hv.t : undefined;
    const scale = paintPressure(el, rc, series, { cursor }, renderTheme(resolvedTheme(ui.theme)));
    if (series && scale !== undefined) record(PRESSURE_DRAWN, el, { series, scale });
  };
}

function PressureCanvas({ cgroup }: { cgroup?: string | undefined }) {
  const view = cgroup === undefined ? PRESSURE_VIEW : CGROUP_PRESSURE_VIEW;
  const canvas = useRef<HTMLCanvasElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const size = useRef<Size>({ width: 0, height: 0 });
  useElementSize(box, (w) => {
    size.current = { width: w, height: PRESSURE_HEIGHT };
    scheduler.invalidate(view);
  });
  useEffect(() => {
    const unregister = [
      scheduler.register(
        view,
        pressureDraw(
          () => canvas.current,
          () => size.current,
          cgroup,
        ),
      ),
      useHover.subscribe((s, p) => {
        if (s.t !== p.t || s.drag !== p.drag) scheduler.invalidate(view);
      }),
    ];
    return () => {
      for (const u of unregister) u();
    };
  }, [view, cgroup]);
  const words =
    cgroup === undefined
      ? {
          row: 'pressure-row',
          canvas: 'pressure',
          aria: `The host's I/O pressure per heat map column (${PRESSURE_SOURCE}): pale, the share of the time some task was stalled on I/O; solid, every non-idle task`,
          title: "The kernel's PSI: it sees waits no block tracepoint can, such as bios held by blk-throttle (io.max) and page-cache waits",
          scope: 'host-wide, all disks',
        }
      : {
          row: 'cgroup-pressure-row',
          canvas: 'cgroup-pressure',
          aria: `The I/O pressure of cgroup ${cgroup} per heat map column (${cgroupPressureSource(cgroup)}): pale, the share of the time some of its tasks were stalled on I/O; solid, all of them`,
          title: "The cgroup's PSI: its tasks' I/O stall on every disk, whatever held it (its own io.max too)",
          scope: `cgroup ${cgroup}`,
        };
  return (
    <div className="pressure-row" data-testid={words.row} data-cgroup={cgroup}>
      <span className="pressure-label">I/O pressure</span>
      <div ref={box} className="pressure-box">
        <canvas
          ref={canvas}
          className="pressure"
          data-testid={words.canvas}
          role="img"
          aria-label={words.aria}
          style={{ height: PRESSURE_HEIGHT }}
        />
      </div>
      <span className="pressure-title" title={words.title}>
        {words.scope}
      </span>
    </div>
  );
}

/** The strip, and the filtered cgroup's, or nothing where the data window has no such pressure. */
export function PressureStrip() {
  useData((s) => s.dataVersion);
  const win = useData((s) => s.window);
  const cgroup = useUi((s) => s.cgroup);
  if (!win) return null;
  return (
    <>
      {hasPressure(win.frames) && <PressureCanvas />}
      {cgroup !== undefined && hasPressure(win.frames, cgroup) && <PressureCanvas key={cgroup} cgroup={cgroup} />}
    </>
  );
}
