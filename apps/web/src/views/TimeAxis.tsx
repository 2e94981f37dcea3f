/** The shared time axis above every disk's heat map (d3, SVG), redrawn with the view. */
import { useEffect, useRef } from 'react';
import { renderTimeAxis } from '../render/axes.js';
import { scheduler } from '../render/scheduler.js';
import { setPlotWidth } from '../store/actions.js';
import { useData } from '../store/pipelineStore.js';
import { HIST_WIDTH, Y_AXIS_WIDTH } from './DiskRow.js';
import { type Size, useElementSize } from './useElementSize.js';

/** The axis's scheduler key. */
export const TIME_AXIS_VIEW = 'time-axis';

export function TimeAxis() {
  const g = useRef<SVGGElement>(null);
  const svg = useRef<SVGSVGElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const size = useRef<Size>({ width: 0, height: 0 });
  useElementSize(box, (w, h) => {
    size.current = { width: w, height: h };
    setPlotWidth(w);
    scheduler.invalidate(TIME_AXIS_VIEW);
  });
  useEffect(() => {
    return scheduler.register(TIME_AXIS_VIEW, () => {
      const el = g.current;
      const w = size.current.width;
      if (!el || w <= 0) return;
      // Only when it changed: the same value written again still asks chromium to look at the svg.
      if (svg.current && svg.current.getAttribute('width') !== String(w)) svg.current.setAttribute('width', String(w));
      const { visible: v, window: cur } = useData.getState();
      renderTimeAxis(el, v.from, v.to, w, 'top', cur?.step ?? 1);
    });
  }, []);
  return (
    <div className="time-axis-row" style={{ gridTemplateColumns: `${Y_AXIS_WIDTH}px 1fr ${HIST_WIDTH}px` }}>
      <span />
      <div ref={box} className="time-axis" data-testid="time-axis">
        <svg ref={svg} height={26} aria-hidden="true">
          <g ref={g} transform="translate(0,25)" />
        </svg>
      </div>
      <span className="hist-title">latency distribution (share of I/Os)</span>
    </div>
  );
}
