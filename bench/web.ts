/**
 * Dashboard benchmark, in headless Debian chromium (run: node --import tsx bench/web.ts).
 *
 *   1. The real heat map renderer on a bare page, at DPR 1 and DPR 2: full redraw of 3,600 s ×
 *      every bucket (budget ≤ 4 ms median) and a live column append (≤ 1 ms), each timed up to
 *      the pixels being rasterized (a one-pixel readback), and JS alone.
 *   2. The built dashboard importing a one-hour, three-disk snapshot through its file input
 *      (≤ 1.5 s, no main-thread task over 50 ms: Long Tasks API), then frames per second while
 *      drag-zooming (a brush drag, then Ctrl+wheel zooming; budget ≥ 55), with per-frame draw
 *      times. Sections 1 and 2 run on a quiet machine.
 *   3. Live (bench/web/live.ts): the real agent and fio at up to 45 k IOPS on four loop devices
 *      on this machine, the page at ?live=3600: long tasks over three windows of 30 s of steady
 *      live updates (no task over 50 ms) and time-range click latency (≤ 200 ms); beside the
 *      long tasks, those of a near-idle page under the same load (the machine's floor). Needs
 *      root and fio; skipped, saying so, without them.
 *
 * `--sections renderer,dashboard,live` runs a subset (default: all; bench/web/sections.ts): the
 * budgets of the sections left out are printed as not measured, and the bench as incomplete.
 *
 * Prints each figure beside its budget, a verdict over every budget, and one JSON line
 * ("bench-web: {...}") for CI to keep.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { hook, type Hooked, launch } from '@blkheat/testkit';
import { syntheticSource } from '../apps/web/test/fixtures/synthetic.ts';
import { exportSnapshotText } from '../apps/web/src/model/snapshot.ts';
import { cpuBetween, describeCpu, markCpu } from './web/cpu.ts';
import { fps, type FpsResult, type PageGlobals, type Stats } from './web/fps.ts';
import { LIVE, runLive, type LiveOutcome } from './web/live.ts';
import { describeLongTasks, longTasksBetween, type LongTaskStats, pageNow, recordLongTasks } from './web/longtasks.ts';
import { PROFILE_AT, PROFILE_PATH, profileUnrecordable, startProfile } from './web/profile.ts';
import { describeSections, NOT_ASKED, type Section, sectionsFromArgs } from './web/sections.ts';
import { serveStatic } from './web/serve.ts';

const root = join(import.meta.dirname, '..');
const web = join(root, 'apps/web');
const vite = join(web, 'node_modules/vite/bin/vite.js');

/** The budgets (issue 29, "A page that keeps up", and the renderer's own). */
const BUDGET = Object.freeze({
  fullRedrawMs: 4,
  appendMs: 1,
  dragZoomFps: 55,
  importMs: 1500,
  /** The Long Tasks API reports tasks over 50 ms: the budget is that it reports none. */
  longTasks: 0,
  clickMs: 200,
});

function build(args: string[], env: Record<string, string> = {}): void {
  const r = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn', ...args], {
    cwd: web,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, ...env },
  });
  if (r.status !== 0) throw new Error(`vite build ${args.join(' ')} failed`);
}

const fmt = (v: number): string => v.toFixed(v < 10 ? 2 : 1);

interface RendererResult {
  cells: unknown;
  fullRedraw: Stats;
  fullRedrawJs: Stats;
  repaint: Stats;
  zoomFrame: Stats;
  colourLoop: Stats;
  putImageData: Stats;
  blitJs: Stats;
  linesJs: Stats;
  append: Stats;
  appendJs: Stats;
  appendIncrementalShare: number;
}

interface DashboardResult {
  importMs: number;
  snapshotMB: number;
  importLongTasks: LongTaskStats;
  brush: FpsResult;
  wheel: FpsResult;
}

/** One budget's line of the verdict. */
interface Check {
  readonly name: string;
  readonly measured: string;
  readonly budget: string;
  /** undefined: not measured (the live section was skipped or failed). */
  readonly ok: boolean | undefined;
}

const sections = sectionsFromArgs();
const unrecordable = profileUnrecordable(sections);
if (unrecordable) {
  console.error(`bench/web: ${unrecordable}`);
  process.exit(2);
}

async function main(): Promise<void> {
  console.log(describeSections(sections));
  const out = mkdtempSync(join(tmpdir(), 'blkheat-bench-web-'));
  const benchDir = join(out, 'bench');
  const appDir = join(out, 'app');
  const renderer = new Map<number, RendererResult>();
  let dashboard: DashboardResult | undefined;
  let live: LiveOutcome = { status: 'skipped', why: NOT_ASKED };
  try {
    const app = sections.has('dashboard') || sections.has('live');
    const builds = [sections.has('renderer') && 'the renderer bench page', app && 'the dashboard'].filter(Boolean);
    console.log(`bench/web: building ${builds.join(' and ')}…`);
    if (sections.has('renderer')) build(['--config', 'vite.bench.config.ts'], { BLKHEAT_BENCH_OUT: benchDir });
    // Profiling (web/profile.ts) wants the sources' function names in the profile.
    if (app) build(['--outDir', appDir, '--emptyOutDir', ...(PROFILE_PATH ? ['--minify', 'false'] : [])]);
    if (sections.has('renderer') || sections.has('dashboard')) {
      const session = await launch({ width: 1400, height: 1000 });
      const cpu0 = markCpu();
      try {
        await recordLongTasks(session.context);
        if (sections.has('renderer')) for (const [dpr, r] of await rendererSection(session.page, benchDir)) renderer.set(dpr, r);
        if (sections.has('dashboard')) dashboard = await dashboardSection(session.page, appDir, out);
        // Other work on the machine moves these figures: say how much there was.
        console.log(`\nmachine during sections 1-2: ${describeCpu(cpuBetween(cpu0, markCpu()))}`);
        // The page is served without an agent behind it: its attempts to reach one (404s on the
        // API and the stream) are expected; anything else is worth seeing.
        const unexpected = session.errors.filter((e) => !/api\/v1\/|status of 404/.test(e));
        if (unexpected.length > 0) console.log('page errors:', unexpected);
      } finally {
        await session.close();
      }
    }

    // ---- 3. live, under load (the agent serves the dashboard built above)
    if (sections.has('live')) live = await runLive(appDir);
    else console.log(`\nlive: skipped (${NOT_ASKED})`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }

  const notRun = (s: Section): string | undefined => (sections.has(s) ? undefined : NOT_ASKED);
  const checks = verdict(renderer, dashboard, live, notRun);
  const measured = checks.every((c) => c.ok !== undefined);
  const ok = checks.every((c) => c.ok === true);
  console.log('\nverdict:');
  for (const c of checks) {
    const mark = c.ok === undefined ? 'NOT MEASURED' : c.ok ? 'ok' : 'OVER';
    console.log(`  ${mark.padEnd(12)} ${c.name}: ${c.measured}   budget ${c.budget}`);
  }
  const summary = Object.fromEntries(checks.map((c) => [c.name, { measured: c.measured, budget: c.budget, ok: c.ok ?? null }]));
  const details = { ...Object.fromEntries([...renderer].map(([dpr, r]) => [`renderer@${dpr}x`, r])), dashboard, live };
  console.log(
    `\nbench-web: ${JSON.stringify({ withinBudget: ok, complete: measured, sections: [...sections], checks: summary, details })}`,
  );
  const unmeasured = [
    ...(['renderer', 'dashboard'] as const).filter((s) => !sections.has(s)).map((s) => `the ${s} section was ${NOT_ASKED}`),
    ...(live.status === 'measured' ? [] : [`the live section was ${live.status} (${live.why})`]),
  ];
  console.log(
    ok
      ? 'bench/web: within budget'
      : measured
        ? 'bench/web: OVER BUDGET'
        : `bench/web: ${checks.some((c) => c.ok === false) ? 'OVER BUDGET, and ' : ''}INCOMPLETE: ${unmeasured.join('; ')}`,
  );
}

/** 1. The real heat map renderer on a bare page, at DPR 1 and 2. */
async function rendererSection(page: Page, benchDir: string): Promise<Map<number, RendererResult>> {
  const results = new Map<number, RendererResult>();
  const srv = await serveStatic(benchDir);
  try {
    await page.goto(`${srv.url}src/dev/bench.html`);
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).document.title === 'ready');
    for (const dpr of [1, 2]) {
      const r = await page.evaluate(
        (d) => (globalThis as unknown as { __bench: { run(o: { dpr: number }): Promise<RendererResult> } }).__bench.run({ dpr: d }),
        dpr,
      );
      results.set(dpr, r);
      console.log(`\nrenderer (HeatLayers) at DPR ${dpr}, ${JSON.stringify(r.cells)}, medians with p95, up to rasterized pixels:`);
      console.log(
        `  full redraw, new data  ${fmt(r.fullRedraw.median)} ms (p95 ${fmt(r.fullRedraw.p95)}; JS ${fmt(r.fullRedrawJs.median)})   budget ≤ ${BUDGET.fullRedrawMs} ms`,
      );
      console.log(
        `    JS parts: colour ${fmt(r.colourLoop.median)} ms, putImageData ${fmt(r.putImageData.median)} ms, blit ${fmt(r.blitJs.median)} ms, percentile lines ${fmt(r.linesJs.median)} ms`,
      );
      console.log(`  full redraw, same data (colour scale, theme, resize)  ${fmt(r.repaint.median)} ms (p95 ${fmt(r.repaint.p95)})`);
      console.log(`  zoom/pan frame (blit + lines, no recolour)  ${fmt(r.zoomFrame.median)} ms (p95 ${fmt(r.zoomFrame.p95)})`);
      console.log(
        `  live column append  ${fmt(r.append.median)} ms (p95 ${fmt(r.append.p95)}; JS ${fmt(r.appendJs.median)}; ${Math.round(r.appendIncrementalShare * 100)}% incremental)   budget ≤ ${BUDGET.appendMs} ms`,
      );
    }
  } finally {
    await srv.close();
  }
  return results;
}

/** 2. The built dashboard: importing a one-hour snapshot, then drag-zooming over it. */
async function dashboardSection(page: Page, appDir: string, out: string): Promise<DashboardResult> {
  const T0 = Math.floor(Date.now() / 1000 / 3600) * 3600 - 3600;
  const snap = syntheticSource({ samplesPerClass: 0 }).snapshot(T0, T0 + 3600, 'bench');
  const text = exportSnapshotText(snap);
  // Handed over as a file on disk, as a user picks one: the browser gives the page a File backed
  // by it, and the dashboard's worker reads it. Handed over as bytes, playwright would rebuild the
  // file inside the page from base64, a character at a time: about 0.8 s of the page's main
  // thread in one task that is the harness's, not the dashboard's (a CPU profile shows it under
  // playwright's injected setInputFiles).
  const file = join(out, 'bench-snapshot.json');
  writeFileSync(file, text);
  const srv = await serveStatic(appDir);
  try {
    await page.goto(srv.url);
    await page.waitForFunction(() => (globalThis as unknown as Partial<Hooked>).__blkheat !== undefined);
    await hook(page).idle();
    // The long-task window opens on the page's clock before the file is handed over, and closes once the page is idle.
    const from = await pageNow(page);
    const profiling = PROFILE_AT === 'import' ? await startProfile(page) : undefined;
    const t0 = Date.now();
    await page.setInputFiles('[data-testid=import-input]', file);
    await page.waitForFunction(() => (globalThis as unknown as Hooked).__blkheat.state().mode === 'snapshot');
    await hook(page).idle();
    const importMs = Date.now() - t0;
    await profiling?.stop();
    const importLongTasks = await longTasksBetween(page, from, await pageNow(page));
    const st = await hook(page).state();
    const snapshotMB = text.length / 1e6;
    console.log(
      `\ndashboard: imported a ${snapshotMB.toFixed(1)} MB snapshot (3,600 s, ${snap.disks.length} disks) in ${importMs} ms (file handed over → idle); step ${st.step} s   budget ≤ ${BUDGET.importMs} ms`,
    );
    console.log(`  long tasks during the import: ${describeLongTasks(importLongTasks)}   budget: no task > 50 ms`);

    const box = await page.locator('[data-testid=heatmap-overlay-vda]').boundingBox();
    if (!box) throw new Error('no heat map on the page');
    const y = box.y + box.height / 2;
    const brush = await fps(page, async () => {
      await page.mouse.move(box.x + box.width * 0.1, y);
      await page.mouse.down();
      for (let i = 1; i <= 150; i++) await page.mouse.move(box.x + box.width * (0.1 + (0.6 * i) / 150), y + Math.sin(i / 9) * 20);
      await page.mouse.up();
    });
    await hook(page).idle();
    const zoomed = await hook(page).state();
    console.log(
      `  drag-zoom brush: ${fmt(brush.fps)} fps over ${fmt(brush.seconds)} s (worst frame gap ${fmt(brush.worstGapMs)} ms; draws median ${fmt(brush.draws.median)} ms p95 ${fmt(brush.draws.p95)} ms) → view ${Math.round(zoomed.view.to - zoomed.view.from)} s at step ${zoomed.step} s; budget ≥ ${BUDGET.dragZoomFps} fps`,
    );
    await page.keyboard.press('Escape');
    await hook(page).idle();
    const wheel = await fps(page, async () => {
      await page.mouse.move(box.x + box.width * 0.5, y);
      await page.keyboard.down('Control');
      for (let i = 0; i < 160; i++) await page.mouse.wheel(0, i < 80 ? -40 : 40);
      await page.keyboard.up('Control');
    });
    console.log(
      `  Ctrl+wheel zoom: ${fmt(wheel.fps)} fps over ${fmt(wheel.seconds)} s (worst frame gap ${fmt(wheel.worstGapMs)} ms; draws median ${fmt(wheel.draws.median)} ms p95 ${fmt(wheel.draws.p95)} ms); budget ≥ ${BUDGET.dragZoomFps} fps`,
    );
    return { importMs, snapshotMB, importLongTasks, brush, wheel };
  } finally {
    await srv.close();
  }
}

/** Every budget, measured or not (`notRun`: why a section did not run, if it did not). */
function verdict(
  renderer: ReadonlyMap<number, RendererResult>,
  d: DashboardResult | undefined,
  live: LiveOutcome,
  notRun: (s: Section) => string | undefined,
): Check[] {
  const checks: Check[] = [];
  const none = (s: Section): string => {
    const why = notRun(s);
    return why === undefined ? '—' : `— (skipped: ${why})`;
  };
  for (const dpr of [1, 2]) {
    const r = renderer.get(dpr);
    checks.push({
      name: `full redraw @DPR ${dpr}`,
      measured: r ? `${fmt(r.fullRedraw.median)} ms` : none('renderer'),
      budget: `≤ ${BUDGET.fullRedrawMs} ms`,
      ok: r ? r.fullRedraw.median <= BUDGET.fullRedrawMs : undefined,
    });
    checks.push({
      name: `append @DPR ${dpr}`,
      measured: r ? `${fmt(r.append.median)} ms` : none('renderer'),
      budget: `≤ ${BUDGET.appendMs} ms`,
      ok: r ? r.append.median <= BUDGET.appendMs : undefined,
    });
  }
  checks.push({
    name: 'snapshot import',
    measured: d ? `${d.importMs} ms (${d.snapshotMB.toFixed(1)} MB)` : none('dashboard'),
    budget: `≤ ${BUDGET.importMs} ms`,
    ok: d ? d.importMs <= BUDGET.importMs : undefined,
  });
  checks.push({
    name: 'long tasks during the import',
    measured: d ? `${d.importLongTasks.count} (longest ${Math.round(d.importLongTasks.longestMs)} ms)` : none('dashboard'),
    budget: 'none > 50 ms',
    ok: d ? d.importLongTasks.count <= BUDGET.longTasks : undefined,
  });
  const drag = d ? Math.min(d.brush.fps, d.wheel.fps) : undefined;
  checks.push({
    name: 'drag-zoom',
    measured: drag === undefined ? none('dashboard') : `${fmt(drag)} fps`,
    budget: `≥ ${BUDGET.dragZoomFps} fps`,
    ok: drag === undefined ? undefined : drag >= BUDGET.dragZoomFps,
  });
  const m = live.status === 'measured' ? live : undefined;
  const why = m ? '' : ` (${live.status === 'measured' ? '' : `${live.status}: ${live.why}`})`;
  const load = m
    ? ` at ${Math.round(m.devices.total).toLocaleString('en-US')} IOPS of ${LIVE.targetIops.toLocaleString('en-US')} asked`
    : '';
  checks.push({
    name: `long tasks, ${LIVE.windows} × ${LIVE.observeS} s of live updates${load}`,
    measured: m
      ? `${m.steady.count} (longest ${Math.round(m.steady.longestMs)} ms, ${(m.steady.blockedShare * 100).toFixed(1)}% blocked; ` +
        `${m.steadyWindows.map((w) => w.count).join(', ')} a window); ` +
        `a near-idle page under the same load, ${LIVE.observeS} s: ${m.floor.steady.count} (longest ${Math.round(m.floor.steady.longestMs)} ms)`
      : `—${why}`,
    budget: 'none > 50 ms',
    ok: m ? m.steady.count <= BUDGET.longTasks : undefined,
  });
  checks.push({
    name: 'time-range click → first paint',
    measured: m ? `median ${Math.round(m.clickMedianMs)} ms, worst ${Math.round(m.clickWorstMs)} ms` : `—${why}`,
    budget: `≤ ${BUDGET.clickMs} ms (every click)`,
    ok: m ? m.clickWorstMs <= BUDGET.clickMs : undefined,
  });
  return checks;
}

await main();
