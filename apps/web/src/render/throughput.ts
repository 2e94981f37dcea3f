/**
 * The throughput strip under a disk's heat map: four lanes (IOPS, MB/s, I/Os in flight, age of
 * the oldest I/O in flight), one bar per heat map column, each lane scaled to its largest visible
 * value (while live, that top is held as long as the largest stays in its upper quarter:
 * laneTopHeld), drawn with the heat map's x mapping (the same RenderContext time → css, so it
 * zooms and scrolls with it), and the shared time cursor. Columns with no data get a faint band,
 * never a zero-height bar. Bios waiting for a request (protocol 4) stack, paler, on the in-flight
 * bar (the lane is scaled to both), their oldest age stands, paler, behind the oldest in-flight
 * age, and a column whose queue was frozen gets a tick along the top of the in-flight lane. Each
 * lane's label (its scale's top) sits on a plate of the background, above the bars.
 *
 * Two canvases, as the heat maps' layers (render/heatLayers.ts):
 *
 *   bars    painted for a window a little wider than the visible one (contract.ts slackFor),
 *           anchored at its start. While live, the window only slides right at the same scale:
 *           the columns whose values changed (the newest, filling; the oldest, losing its first
 *           seconds) are painted again, and the canvas is shifted left with a CSS transform, the
 *           compositor's work. Everything else (zoom, pan, resize, theme, a lane's scale) paints
 *           it whole.
 *   labels  the lanes' separators, captions and the time cursor, over the visible window only:
 *           drawn again only when one of them changed.
 *
 * Painted whole every live second, a live hour's four strips were the page's costliest views
 * (844 ms of 90 s of draws at 45,000 IOPS, bench/web's live section).
 */
import { apply } from '../model/coords.js';
import { laneCaption, laneFacts, laneTopHeld, THROUGHPUT_KEYS, type ThroughputKey, type ThroughputSeries } from '../model/throughput.js';
import {
  alreadyShown,
  clearedCanvas,
  measuredText,
  pageContext,
  prepareCanvas,
  type RenderContext,
  renderContext,
  pxPerSecond,
  type RenderTheme,
  slackFor,
  type SlideAnchor,
  slidesWithin,
  slideTransform,
} from './contract.js';
import { drawTimeCursor } from './overlay.js';
import { changedPixels, LANE_PAD, laneBounds, rasterLanes } from './throughputRaster.js';

export interface ThroughputMarks {
  /** The time cursor (seconds), as on the heat maps. */
  readonly cursor?: number | undefined;
}

/** Each lane's scale (its top value): what the labels say. */
export type ThroughputScales = Readonly<Record<ThroughputKey, number>>;

/** What a strip drew: each lane's scale and caption (model/throughput.ts laneCaption). */
export interface ThroughputLanes {
  readonly scales: ThroughputScales;
  readonly captions: Readonly<Record<ThroughputKey, string>>;
}

/** The series of a disk's columns [col0, col1) (model/throughput.ts ThroughputColumns.series). */
export type SeriesOf = (col0: number, col1: number) => ThroughputSeries;

/** The columns [col0, col1) a window of `rc` covers, whole. */
function columnsOf(rc: RenderContext): [number, number] {
  const vp = rc.viewport;
  return [Math.floor(vp.from / rc.step), Math.ceil(vp.to / rc.step)];
}

/** What the bars canvas holds: painted for `rc` (anchored, wider than the view) with `tops`. */
interface Anchor extends SlideAnchor {
  readonly theme: RenderTheme;
  readonly tops: readonly number[];
  readonly image: ImageData;
  /** The series of the anchored columns as painted (compared with the next one's to find what changed). */
  series: ThroughputSeries;
}

export interface ThroughputDrawResult extends ThroughputLanes {
  /** 'incremental': only changed columns painted (`columns` of them) and the bars slid. */
  readonly kind: 'full' | 'incremental';
  readonly columns: number;
}

export class ThroughputStrip {
  private anchor: Anchor | undefined;

  constructor(
    readonly bars: HTMLCanvasElement,
    readonly labels: HTMLCanvasElement,
  ) {}

  /**
   * Draws the columns of `rc`'s window: `visible` is the series of its columns (what the scales,
   * captions and the test hook read), `seriesOf` gives those of the anchored, wider window.
   * Undefined `visible`: nothing to draw (both canvases cleared).
   */
  draw(
    rc: RenderContext,
    visible: ThroughputSeries | undefined,
    seriesOf: SeriesOf,
    marks: ThroughputMarks,
    theme: RenderTheme,
  ): ThroughputDrawResult | undefined {
    const vp = rc.viewport;
    if (!visible) {
      this.anchor = undefined;
      clearedCanvas(this.bars, vp);
      this.bars.style.width = `${vp.width}px`;
      this.bars.style.transform = '';
      clearedCanvas(this.labels, vp);
      alreadyShown(this.labels, '');
      return undefined;
    }
    const facts = THROUGHPUT_KEYS.map((key) => laneFacts(visible, key));
    const exact = facts.map((f) => f.top);
    const a = this.anchor;
    // The same picture moved on: the bars slide, with the tops they were painted with while those
    // still fit what is in view (model/throughput.ts laneTopHeld). Otherwise each lane is scaled
    // to its largest visible value again.
    const canSlide =
      a !== undefined &&
      slidesWithin(a, rc) &&
      a.theme === theme &&
      a.rc.step === rc.step &&
      a.tops.every((top, li) => laneTopHeld(top, exact[li] ?? 0));
    const tops = canSlide ? a.tops : exact;
    const scales = { iops: tops[0] ?? 0, mbps: tops[1] ?? 0, queue: tops[2] ?? 0, oldest: tops[3] ?? 0 };
    const captions = { iops: '', mbps: '', queue: '', oldest: '' };
    THROUGHPUT_KEYS.forEach((key, li) => {
      const f = facts[li];
      captions[key] = laneCaption(key, scales[key], f?.inView ?? false, f?.waiting ?? false);
    });
    const painted = canSlide ? this.slide(a, rc, seriesOf) : this.full(rc, seriesOf, theme, tops);
    this.drawLabels(rc, captions, marks, theme);
    return { scales, captions, kind: canSlide ? 'incremental' : 'full', columns: painted };
  }

  /** Paints the bars of a window wider than `rc`'s, anchored at its start; returns the columns painted. */
  private full(rc: RenderContext, seriesOf: SeriesOf, theme: RenderTheme, tops: readonly number[]): number {
    const vp = rc.viewport;
    const pxPerSec = pxPerSecond(rc);
    const wide = vp.width + slackFor(vp.width);
    const arc = renderContext({ ...vp, to: vp.from + wide / pxPerSec, width: wide }, rc.step);
    const ctx = prepareCanvas(this.bars, wide, vp.height, vp.dpr);
    this.bars.style.width = `${wide}px`;
    this.bars.style.transform = '';
    // The last paint's pixels, written over whole when the canvas kept its size.
    const kept = this.anchor?.image;
    this.anchor = undefined;
    if (!ctx) return 0;
    const [col0, col1] = columnsOf(arc);
    const series = seriesOf(col0, col1);
    const image =
      kept && kept.width === this.bars.width && kept.height === this.bars.height ? kept : new ImageData(this.bars.width, this.bars.height);
    rasterLanes(image, arc, series, theme, tops, 0, image.width);
    ctx.putImageData(image, 0, 0);
    this.anchor = { rc: arc, pxPerSec, width: vp.width, height: vp.height, dpr: vp.dpr, theme, tops, image, series };
    return series.iops.length;
  }

  /** Paints again the anchored columns whose values changed, and slides the bars; returns how many changed. */
  private slide(a: Anchor, rc: RenderContext, seriesOf: SeriesOf): number {
    const [col0, col1] = columnsOf(a.rc);
    const series = seriesOf(col0, col1);
    const { runs, columns } = changedPixels(a.rc, a.series, series, a.image.width);
    a.series = series;
    const ctx = runs.length > 0 ? pageContext(this.bars) : null;
    if (ctx) {
      for (const [lo, hi] of runs) {
        // Pixel columns a changed column shares with its neighbours are painted from all of them.
        rasterLanes(a.image, a.rc, series, a.theme, a.tops, lo, hi);
        ctx.putImageData(a.image, 0, 0, lo, 0, hi - lo, a.image.height);
      }
    }
    const t = slideTransform(a, rc);
    if (this.bars.style.transform !== t) this.bars.style.transform = t;
    return columns;
  }

  /** The lanes' separators, captions (each on a plate of the background) and the time cursor, when one of them changed. */
  private drawLabels(
    rc: RenderContext,
    captions: Readonly<Record<ThroughputKey, string>>,
    marks: ThroughputMarks,
    theme: RenderTheme,
  ): void {
    const vp = rc.viewport;
    const cursorX = marks.cursor === undefined ? '' : Math.round(apply(rc.time, marks.cursor));
    const key = `${vp.width}x${vp.height}@${vp.dpr}/${theme.font}/${theme.background}/${theme.grid}/${theme.muted}/${theme.foreground}/${cursorX}/${THROUGHPUT_KEYS.map((k) => captions[k]).join('|')}`;
    if (alreadyShown(this.labels, key)) return;
    const ctx = clearedCanvas(this.labels, vp);
    if (!ctx) return;
    ctx.font = theme.font;
    ctx.textBaseline = 'top';
    THROUGHPUT_KEYS.forEach((k, li) => {
      const [top, bottom] = laneBounds(li, vp.height);
      const lane = bottom - top - LANE_PAD;
      if (li > 0) {
        ctx.fillStyle = theme.grid;
        ctx.fillRect(0, top, vp.width, 1);
      }
      const text = captions[k];
      // On a plate of the background, above the bars: in a steady view they reach the lane's top,
      // and a label drawn straight over them could not be read (issue 29).
      const m = measuredText(ctx, text);
      const textH = Math.min(lane, (m.ascent || 8) + (m.descent || 3));
      ctx.fillStyle = theme.background;
      ctx.globalAlpha = 0.85;
      ctx.fillRect(2, top + LANE_PAD, m.width + 4, textH);
      ctx.globalAlpha = 1;
      ctx.fillStyle = theme.muted;
      ctx.fillText(text, 4, top + LANE_PAD);
    });
    if (marks.cursor !== undefined) drawTimeCursor(ctx, rc, marks.cursor, theme.foreground);
  }
}
