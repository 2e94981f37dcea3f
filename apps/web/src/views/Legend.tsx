/**
 * Colour legend: the palette as a ramp. With one scale for every disk it has count ticks; with
 * a scale per disk (the default) it says so, and each disk's head line shows its own maximum.
 * Also the key to the "no data" hatching.
 */
import { useEffect, useRef } from 'react';
import { legendTicks, PALETTE_SIZE, paletteCss } from '../model/colour.js';
import { formatCompact } from '../model/format.js';
import { prepareCanvas } from '../render/contract.js';
import { data } from '../store/data.js';
import { useUi } from '../store/store.js';
import { paletteFor, resolvedTheme } from './theme.js';

const W = 220;
const H = 10;

export function Legend() {
  const canvas = useRef<HTMLCanvasElement>(null);
  useUi((s) => s.dataVersion);
  const theme = useUi((s) => resolvedTheme(s.theme));
  const colour = useUi((s) => s.colour);
  const perDisk = useUi((s) => s.norm === 'disk');
  const step = data.current?.step ?? 1;
  const scale = perDisk ? undefined : data.current?.scale;
  useEffect(() => {
    const c = canvas.current;
    if (!c) return;
    const ctx = prepareCanvas(c, W, H, window.devicePixelRatio || 1);
    if (!ctx) return;
    const lut = paletteFor(theme);
    for (let i = 1; i < PALETTE_SIZE; i++) {
      ctx.fillStyle = paletteCss(lut, i);
      ctx.fillRect(((i - 1) / (PALETTE_SIZE - 1)) * W, 0, W / (PALETTE_SIZE - 1) + 0.5, H);
    }
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
                  {formatCompact(t)}
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
