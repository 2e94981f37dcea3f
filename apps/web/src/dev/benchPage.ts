/**
 * Renderer benchmark page (bench/web.ts drives it in headless chromium; not part of the
 * dashboard bundle). Runs the dashboard's own heat map renderer (HeatLayers: cell bitmap +
 * percentile lines and "no data" bands, full and incremental paths) on a bare page, on a
 * matrix of 3,600 one-second columns × every bucket of the schema, all non-zero, with every
 * second recorded but one 60 s agent outage (drawn as "no data"). `?scale=3` benchmarks the
 * fine schema (twice the rows).
 */
import { BUCKET_SCHEMA, bucketCount, schemaOfScale } from '@blkheat/shared-types';
import { buildPalette, CountScale, paletteInterpolator } from '../model/colour.js';
import { HeatMatrix } from '../model/heatmatrix.js';
import { PercentileTrack } from '../model/percentiles.js';
import { pageContext, renderContext } from '../render/contract.js';
import { HeatLayers, type LayerStyle } from '../render/heatLayers.js';

const SCHEMA = schemaOfScale(Number(new URLSearchParams(window.location.search).get('scale') ?? 2)) ?? BUCKET_SCHEMA;
const ROWS = bucketCount(SCHEMA);
/** Rows per row of the default schema (the shapes below are in its rows). */
const ROW_SCALE = 2 ** (SCHEMA.scale - BUCKET_SCHEMA.scale);
const COLS = 3600;
const T0 = 1_700_000_000;

interface Stats {
  readonly runs: number;
  readonly median: number;
  readonly p95: number;
  readonly min: number;
  readonly max: number;
}

function stats(xs: number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
  return { runs: s.length, median: at(0.5), p95: at(0.95), min: s[0] as number, max: s[s.length - 1] as number };
}

let seed = 1;
function rnd(): number {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
}

/**
 * One second: every bucket non-zero (the worst case for colouring), shaped like real latency
 * (a log-normal mode that drifts over time, plus a slower second mode), so the percentile
 * lines move the way they do on real data.
 */
function column(c: number): number[] {
  const sparse: number[] = [];
  const mode = 45 + 6 * Math.sin(c / 97) + 2 * Math.sin(c / 13);
  for (let r = 0; r < ROWS; r++) {
    const x = r / ROW_SCALE;
    const a = Math.exp(-((x - mode) ** 2) / 18);
    const b = 0.08 * Math.exp(-((x - mode - 22) ** 2) / 30);
    sparse.push(r, 1 + Math.floor(500 * (a + b) * (0.7 + 0.6 * rnd())));
  }
  return sparse;
}

function setup(width: number, height: number, dpr: number, withGaps: boolean) {
  const box = document.getElementById('box') as HTMLDivElement;
  box.style.width = `${width}px`;
  box.style.height = `${height}px`;
  const heat = document.getElementById('c') as HTMLCanvasElement;
  const lines = document.getElementById('l') as HTMLCanvasElement;
  const gaps = document.getElementById('g') as HTMLCanvasElement;
  const m = new HeatMatrix(ROWS, 1, COLS, T0);
  const outage = (c: number): boolean => c >= T0 + 1800 && c < T0 + 1860;
  for (let c = T0; c < T0 + COLS; c++) {
    if (outage(c)) {
      m.ensure(c);
      continue;
    }
    m.markRecorded(c, 1);
    m.addSparse(c, column(c));
  }
  const style: LayerStyle = {
    palette: buildPalette(paletteInterpolator('dark')),
    scale: new CountScale('log', 1000),
    percentiles: true,
    lineColours: ['#4fd6ff', '#8cff7a', '#ff6be6'],
    gapColour: '#9aa3b2',
  };
  const layers = new HeatLayers(heat, lines, withGaps ? gaps : undefined);
  let track = new PercentileTrack(m, SCHEMA);
  let from = T0;
  // Everything up to the newest column is known: a column without a frame was not recorded.
  const draw = (): string =>
    layers.draw(renderContext({ from, to: from + COLS, uLo: 0, uHi: ROWS, width, height, dpr }, 1), m, track, style, {
      from: T0,
      to: m.end,
    }).kind;
  // Reading one pixel back makes each canvas rasterize what was recorded, so times include the
  // pixels actually being produced, not only the JavaScript that asked for them.
  const hctx = pageContext(heat);
  const lctx = pageContext(lines);
  const flush = (): void => {
    hctx?.getImageData(0, 0, 1, 1);
    lctx?.getImageData(0, 0, 1, 1);
  };
  return {
    m,
    layers,
    draw,
    flush,
    /** New data for every column: fresh percentile cache and a full recolour. */
    newData: () => {
      track = new PercentileTrack(m, SCHEMA);
      layers.invalidate(true);
    },
    track: () => track,
    slide: () => from++,
  };
}

async function frame(): Promise<void> {
  await new Promise((r) => requestAnimationFrame(() => r(undefined)));
}

async function run(opts: { width?: number; height?: number; dpr?: number; runs?: number; gaps?: boolean } = {}) {
  const width = opts.width ?? 1200;
  const height = opts.height ?? 300;
  const dpr = opts.dpr ?? 1;
  const runs = opts.runs ?? 60;
  const b = setup(width, height, dpr, opts.gaps ?? true);
  b.draw();
  b.flush();
  const timed = async (n: number, before: () => void, fn: () => void): Promise<{ all: Stats; js: Stats }> => {
    const all: number[] = [];
    const js: number[] = [];
    for (let i = 0; i < n; i++) {
      await frame();
      before();
      const t0 = performance.now();
      fn();
      const t1 = performance.now();
      b.flush();
      js.push(t1 - t0);
      all.push(performance.now() - t0);
    }
    return { all: stats(all), js: stats(js) };
  };
  // Full redraw: new data in every column (percentiles derived again), every cell recoloured,
  // uploaded and blitted, lines rasterized.
  const full = await timed(runs, b.newData, () => b.draw());
  // The same without deriving percentiles (a colour or theme change, a resize).
  const repaint = await timed(
    runs,
    () => b.layers.invalidate(true),
    () => b.draw(),
  );
  // Zoom/pan frame: the bitmap is unchanged, only blitted and lines re-traced for a new window.
  const blit = await timed(
    runs,
    () => b.layers.invalidate(false),
    () => b.draw(),
  );
  // Where a full redraw's JavaScript goes.
  const colour: number[] = [];
  const upload: number[] = [];
  const blitJs: number[] = [];
  const lines: number[] = [];
  const gapsJs: number[] = [];
  for (let i = 0; i < runs; i++) {
    b.newData();
    b.draw();
    const p = b.layers.lastFull;
    colour.push(p.colourMs);
    upload.push(p.uploadMs);
    blitJs.push(p.blitMs);
    lines.push(p.linesMs);
    gapsJs.push(p.gapsMs);
  }
  // Live append: one new second arrives and the window slides by one column.
  let col = b.m.end;
  let kinds = 0;
  const append = await timed(
    runs * 3,
    () => undefined,
    () => {
      b.m.markRecorded(col, 1);
      b.m.addSparse(col++, column(col));
      b.slide();
      if (b.draw() === 'incremental') kinds++;
    },
  );
  return {
    cells: { columns: COLS, rows: ROWS, canvas: `${width}x${height}@${dpr}x` },
    fullRedraw: full.all,
    fullRedrawJs: full.js,
    repaint: repaint.all,
    zoomFrame: blit.all,
    colourLoop: stats(colour),
    putImageData: stats(upload),
    blitJs: stats(blitJs),
    linesJs: stats(lines),
    gapsJs: stats(gapsJs),
    append: append.all,
    appendJs: append.js,
    appendIncrementalShare: kinds / (runs * 3),
  };
}

(window as unknown as { __bench: { run: typeof run } }).__bench = { run };
document.title = 'ready';
