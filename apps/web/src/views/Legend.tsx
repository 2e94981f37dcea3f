/**
 * Colour legend: the palette as a ramp. With one scale for every disk it has count ticks; with
 * a scale per disk (the default) it says so, and each disk's head line shows its own maximum.
 * Also the key to the "no data" hatching.
 */
import { useEffect, useRef } from 'react';
import { legendTicks } from '../model/colour.js';
import { formatCount } from '../model/format.js';
import { paintRamp } from '../render/ramp.js';
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';
import { paletteFor, resolvedTheme } from './theme.js';

const W = 220;
const H = 10;

export function Legend() {
  const canvas = useRef<HTMLCanvasElement>(null);
  useData((s) => s.dataVersion);
  const win = useData((s) => s.window);
  const theme = useUi((s) => resolvedTheme(s.theme));
  const colour = useUi((s) => s.colour);
  const perDisk = useUi((s) => s.norm === 'disk');
  const step = win?.step ?? 1;
  const scale = perDisk ? undefined : win?.scale;
  useEffect(() => {
    if (canvas.current) paintRamp(canvas.current, paletteFor(theme), W, H, window.devicePixelRatio || 1);
  }, [theme]);
  const ticks = scale ? legendTicks(scale) : [];
  return (
    <div className="legend" data-testid="legend" data-norm={perDisk ? 'disk' : 'shared'} aria-label="colour legend">
      <span className="legend-title">
        I/Os per cell ({step} s × bucket, {colour === 'log' ? 'log' : 'linear'})
        <br />
        <span className="muted">{perDisk ? 'scaled per disk: top colour = that disk’s busiest cell' : 'one scale for every disk'}</span>
      </span>
      <div className="legend-ramp">
        <canvas ref={canvas} />
        <div className="legend-ticks">
          {scale
            ? ticks.map((t) => (
                <span key={t} style={{ left: `${scale.position(t) * 100}%` }}>
                  {formatCount(t, { compact: true })}
                </span>
              ))
            : [
                <span key="lo" className="tick-start">
                  1
                </span>,
                <span key="hi" className="tick-end">
                  each disk’s max (on its row)
                </span>,
              ]}
        </div>
      </div>
      <span className="legend-gap" data-testid="legend-gap">
        <span className="gap-swatch" aria-hidden="true" /> no data: agent not recording
      </span>
    </div>
  );
}
