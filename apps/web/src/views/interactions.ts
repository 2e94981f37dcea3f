/**
 * Pointer, wheel and keyboard gestures on a heat map, as a plain controller bound to one
 * element (no React state per mouse move: hover goes to its own small store, views redraw
 * through the scheduler). The page's `?` help lists them from gestures.ts: change both.
 *
 *   drag                zoom to the dragged time range (a band across every disk)
 *   Alt-drag / Select   box in time × latency → the sampled I/Os inside it
 *   Shift-drag          pan
 *   Ctrl/⌘-drag         compare (A/B): the dragged time range becomes the baseline (no zoom)
 *   click               the sampled I/Os of that cell
 *   wheel               pan; Ctrl/⌘-wheel zooms around the pointer
 *   double-click, Esc   back to live (or the whole snapshot)
 *   keys (focused)      ←/→ ↑/↓ move the cell cursor, Shift+←/→ pan, +/− zoom, Enter selects
 */
import { bucketCount } from '@blkheat/shared-types';
import { cgroupInForce } from '../model/cgroups.js';
import { alignCeil, alignFloor } from '../model/resolution.js';
import type { ViewState } from '../model/view.js';
import { panFrom, panSeconds, resetView, selectCells, zoomBy, zoomTo } from '../store/actions.js';
import { setBaseline } from '../store/compareActions.js';
import { useData } from '../store/pipelineStore.js';
import { useHover, useUi } from '../store/uiStore.js';
import type { HeatGeometry } from './geometry.js';

const CLICK_SLOP = 4;

/** The highest row (overflow bucket) of the heat maps on screen: of the source's bucket schema. */
function topRow(): number {
  const d = useData.getState();
  return bucketCount(d.window?.schema ?? d.schema) - 1;
}

/** Selects one heat-map cell (a click, or Enter on the keyboard cursor): its samples get listed. */
function selectOneCell(dev: string, col: number, step: number, bucket: number): void {
  const ui = useUi.getState();
  const d = useData.getState();
  const schema = d.window?.schema ?? d.schema;
  selectCells({
    dev,
    from: col * step,
    to: (col + 1) * step,
    bucketLo: bucket,
    bucketHi: bucket,
    schema,
    kind: ui.kind,
    classes: ui.classes,
    cgroup: cgroupInForce(ui.cgroup, ui.kind, d.cgroupPhases),
  });
}

export function bindHeatmapGestures(el: HTMLElement, dev: string, geometry: HeatGeometry): () => void {
  let start:
    { x: number; y: number; t: number; u: number; kind: 'zoom' | 'box' | 'pan' | 'baseline'; view: ViewState; id: number } | undefined;

  const viewNow = (): ViewState => useData.getState().visible;

  const hover = (e: PointerEvent | MouseEvent): void => {
    const hit = geometry.hit(e.clientX, e.clientY);
    if (!hit) {
      if (useHover.getState().dev === dev) useHover.setState({ t: undefined, dev: undefined, col: undefined, bucket: undefined });
      return;
    }
    useHover.setState({
      t: hit.t,
      dev,
      col: hit.col,
      bucket: Math.max(0, Math.min(topRow(), hit.bucket)),
      clientX: e.clientX,
      clientY: e.clientY,
    });
  };

  const onDown = (e: PointerEvent): void => {
    if (e.button !== 0) return;
    const hit = geometry.hit(e.clientX, e.clientY);
    if (!hit) return;
    const tool = useUi.getState().tool;
    const kind = e.shiftKey ? 'pan' : e.ctrlKey || e.metaKey ? 'baseline' : e.altKey || tool === 'select' ? 'box' : 'zoom';
    start = { x: e.clientX, y: e.clientY, t: hit.t, u: hit.u, kind, view: viewNow(), id: e.pointerId };
    try {
      el.setPointerCapture(e.pointerId);
    } catch {
      // Synthetic events (tests) have no active pointer to capture; the drag still works.
    }
    el.focus({ preventScroll: true });
    e.preventDefault();
  };

  const onMove = (e: PointerEvent): void => {
    hover(e);
    if (!start || e.pointerId !== start.id) return;
    const moved = Math.abs(e.clientX - start.x) + Math.abs(e.clientY - start.y) > CLICK_SLOP;
    if (!moved) return;
    if (start.kind === 'pan') {
      const rect = el.getBoundingClientRect();
      const span = start.view.to - start.view.from;
      const dt = ((start.x - e.clientX) / Math.max(1, rect.width)) * span;
      panFrom(start.view, dt);
      return;
    }
    // Clamp the far corner to the plot so a drag past the edge still means "to the edge".
    const rect = el.getBoundingClientRect();
    const cx = Math.min(rect.right - 0.5, Math.max(rect.left, e.clientX));
    const cy = Math.min(rect.bottom - 0.5, Math.max(rect.top, e.clientY));
    const hit = geometry.hit(cx, cy);
    if (!hit) return;
    useHover.setState({ drag: { kind: start.kind, dev, t0: start.t, t1: hit.t, u0: start.u, u1: hit.u } });
  };

  const onUp = (e: PointerEvent): void => {
    if (!start || e.pointerId !== start.id) return;
    const s = start;
    start = undefined;
    if (el.hasPointerCapture(e.pointerId)) el.releasePointerCapture(e.pointerId);
    const drag = useHover.getState().drag;
    useHover.setState({ drag: undefined });
    const moved = Math.abs(e.clientX - s.x) + Math.abs(e.clientY - s.y) > CLICK_SLOP;
    const cur = useData.getState().window;
    if (!cur) return;
    const ui = useUi.getState();
    if (!moved) {
      if (s.kind === 'pan') return;
      const col = Math.floor(s.t / cur.step);
      const bucket = Math.max(0, Math.min(topRow(), Math.floor(s.u)));
      selectOneCell(dev, col, cur.step, bucket);
      return;
    }
    if (!drag || drag.kind === 'pan') return;
    if (drag.kind === 'baseline') {
      setBaseline(Math.min(drag.t0, drag.t1), Math.max(drag.t0, drag.t1), cur.step);
      return;
    }
    if (drag.kind === 'zoom') {
      zoomTo(drag.t0, drag.t1);
      return;
    }
    const from = alignFloor(Math.min(drag.t0, drag.t1), cur.step);
    const to = Math.max(from + cur.step, alignCeil(Math.max(drag.t0, drag.t1), cur.step));
    const lo = Math.max(0, Math.floor(Math.min(drag.u0, drag.u1)));
    const hi = Math.min(bucketCount(cur.schema) - 1, Math.floor(Math.max(drag.u0, drag.u1)));
    selectCells({
      dev,
      from,
      to,
      bucketLo: lo,
      bucketHi: hi,
      schema: cur.schema,
      kind: ui.kind,
      classes: ui.classes,
      cgroup: cgroupInForce(ui.cgroup, ui.kind, useData.getState().cgroupPhases),
    });
  };

  const onCancel = (): void => {
    start = undefined;
    useHover.setState({ drag: undefined });
  };

  const onLeave = (): void => {
    if (start) return;
    if (useHover.getState().dev === dev) useHover.setState({ t: undefined, dev: undefined, col: undefined, bucket: undefined });
  };

  const onWheel = (e: WheelEvent): void => {
    const hit = geometry.hit(e.clientX, e.clientY);
    if (!hit) return;
    e.preventDefault();
    const px = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
    if (e.ctrlKey || e.metaKey) {
      zoomBy(hit.t, Math.exp(e.deltaY * px * 0.002));
    } else {
      const v = viewNow();
      const rect = el.getBoundingClientRect();
      const d = (Math.abs(e.deltaX) > Math.abs(e.deltaY) ? e.deltaX : e.deltaY) * px;
      panSeconds((d / Math.max(1, rect.width)) * (v.to - v.from));
    }
  };

  const onDbl = (e: MouseEvent): void => {
    e.preventDefault();
    resetView();
  };

  const onKey = (e: KeyboardEvent): void => {
    const cur = useData.getState().window;
    if (!cur) return;
    const v = viewNow();
    const span = v.to - v.from;
    const h = useHover.getState();
    const mine = h.dev === dev && h.col !== undefined && h.bucket !== undefined;
    let col = mine ? (h.col as number) : Math.floor((v.from + span / 2) / cur.step);
    let bucket = mine ? (h.bucket as number) : Math.floor((cur.yLo + cur.yHi) / 2);
    const moveCursor = (): void => {
      const p = geometry.centre(col * cur.step, bucket);
      useHover.setState({ dev, col, bucket, t: (col + 0.5) * cur.step, clientX: p?.x ?? 0, clientY: p?.y ?? 0 });
    };
    switch (e.key) {
      case 'ArrowLeft':
      case 'ArrowRight': {
        const dir = e.key === 'ArrowLeft' ? -1 : 1;
        if (e.shiftKey) panSeconds(dir * span * 0.25);
        else {
          col += dir;
          moveCursor();
        }
        break;
      }
      case 'ArrowUp':
      case 'ArrowDown':
        bucket = Math.max(0, Math.min(bucketCount(cur.schema) - 1, bucket + (e.key === 'ArrowUp' ? 1 : -1)));
        moveCursor();
        break;
      case '+':
      case '=':
        zoomBy(mine ? (col + 0.5) * cur.step : v.from + span / 2, 0.5);
        break;
      case '-':
      case '_':
        zoomBy(mine ? (col + 0.5) * cur.step : v.from + span / 2, 2);
        break;
      case 'Enter':
      case ' ': {
        selectOneCell(dev, col, cur.step, bucket);
        break;
      }
      default:
        return;
    }
    e.preventDefault();
  };

  const onFocus = (): void => {
    // Put the keyboard cursor somewhere visible on first focus.
    const h = useHover.getState();
    if (h.dev === dev) return;
    const cur = useData.getState().window;
    if (!cur) return;
    const v = viewNow();
    const col = Math.floor((v.to - cur.step / 2) / cur.step) - 1;
    const bucket = Math.floor((cur.yLo + cur.yHi) / 2);
    const p = geometry.centre(col * cur.step, bucket);
    if (p) useHover.setState({ dev, col, bucket, t: (col + 0.5) * cur.step, clientX: p.x, clientY: p.y });
  };

  el.addEventListener('pointerdown', onDown);
  el.addEventListener('pointermove', onMove);
  el.addEventListener('pointerup', onUp);
  el.addEventListener('pointercancel', onCancel);
  el.addEventListener('pointerleave', onLeave);
  el.addEventListener('wheel', onWheel, { passive: false });
  el.addEventListener('dblclick', onDbl);
  el.addEventListener('keydown', onKey);
  el.addEventListener('focus', onFocus);
  return () => {
    el.removeEventListener('pointerdown', onDown);
    el.removeEventListener('pointermove', onMove);
    el.removeEventListener('pointerup', onUp);
    el.removeEventListener('pointercancel', onCancel);
    el.removeEventListener('pointerleave', onLeave);
    el.removeEventListener('wheel', onWheel);
    el.removeEventListener('dblclick', onDbl);
    el.removeEventListener('keydown', onKey);
    el.removeEventListener('focus', onFocus);
  };
}
