/**
 * Opt-in record of the page's main thread over the live section's first steady window, to find
 * what its long tasks are: `BLKHEAT_BENCH_PROFILE=/path/live.cpuprofile node --import tsx
 * bench/web.ts --sections live` writes a V8 CPU profile (JavaScript by function; time in the
 * renderer's own code shows only as "(program)"), and a path ending in `.json` writes a
 * chromium trace instead (tasks, style, layout, paint, canvas, GC, with JavaScript by event, and
 * every thread: the import's worker too), both for chromium's DevTools (Performance panel) or
 * speedscope. A path ending in `.heapprofile` writes V8's sampling heap profile: what allocated
 * how many bytes, by call stack, the garbage collected since counted too (the major GCs' pauses
 * are long tasks, and their rate follows the allocation rate), for DevTools' Memory panel.
 * `BLKHEAT_BENCH_PROFILE_AT=import` records the dashboard section's snapshot import
 * (file handed over → idle) instead, and `BLKHEAT_BENCH_PROFILE_AT=clicks` the live section's
 * time-range clicks. With any of them, the dashboard is built unminified so they name functions
 * as the sources do. Unset, nothing here runs and the build is the shipped one.
 */
import { writeFileSync } from 'node:fs';
import type { CDPSession, Page } from 'playwright-core';
import type { Section } from './sections.ts';

/** Where the record goes, or undefined when not asked for. */
export const PROFILE_PATH: string | undefined = process.env.BLKHEAT_BENCH_PROFILE || undefined;

/** What can be recorded: the live section's steady window or its time-range clicks, or the dashboard section's import. */
type ProfilePoint = 'live' | 'clicks' | 'import';

/** What is recorded (BLKHEAT_BENCH_PROFILE_AT; the steady window by default). */
export const PROFILE_AT: ProfilePoint = profileAt(process.env.BLKHEAT_BENCH_PROFILE_AT);

/** Each point as the bench names it in what it prints. */
const PROFILED: Record<ProfilePoint, string> = { live: 'steady window', clicks: 'time-range clicks', import: 'import' };

/** The section each point is in. */
const SECTION_OF: Record<ProfilePoint, Section> = { live: 'live', clicks: 'live', import: 'dashboard' };

/**
 * Why the record asked for cannot be made with `sections` (its section left out: it would
 * silently record nothing), or undefined.
 */
export function profileUnrecordable(sections: ReadonlySet<Section>): string | undefined {
  if (PROFILE_PATH === undefined) return undefined;
  const section = SECTION_OF[PROFILE_AT];
  if (sections.has(section)) return undefined;
  return `BLKHEAT_BENCH_PROFILE asks for a record of the ${PROFILED[PROFILE_AT]} (BLKHEAT_BENCH_PROFILE_AT=${PROFILE_AT}), which is in the ${section} section, and --sections leaves it out`;
}

function profileAt(v: string | undefined): ProfilePoint {
  if (v === undefined || v === '' || v === 'live') return 'live';
  if (v === 'import' || v === 'clicks') return v;
  // As a bad flag does (sections.ts): said plainly, before anything starts.
  console.error(`bench/web: BLKHEAT_BENCH_PROFILE_AT=${v}: expected "live", "clicks" or "import"`);
  process.exit(2);
}

/** A started record: `stop` writes it and says where. */
export interface Profiling {
  stop(): Promise<void>;
}

const TRACE_CATEGORIES = [
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'disabled-by-default-devtools.timeline.frame',
  'toplevel',
  'v8.execute',
  'blink',
  'cc',
  'gpu',
  'disabled-by-default-v8.gc',
].join(',');

async function startTrace(cdp: CDPSession, path: string): Promise<Profiling> {
  const events: unknown[] = [];
  cdp.on('Tracing.dataCollected', (e) => events.push(...e.value));
  await cdp.send('Tracing.start', { categories: TRACE_CATEGORIES, transferMode: 'ReportEvents' });
  return {
    async stop(): Promise<void> {
      const complete = new Promise<void>((resolve) => cdp.once('Tracing.tracingComplete', () => resolve()));
      await cdp.send('Tracing.end');
      await complete;
      writeFileSync(path, JSON.stringify({ traceEvents: events }));
      await cdp.detach();
      console.log(`  trace of the ${PROFILED[PROFILE_AT]} written to ${path} (${events.length} events)`);
    },
  };
}

/** A sample every this many bytes allocated (V8's default is 32 KiB): ~40 a second on the loaded live page (39.8 MB in 30 s). */
const HEAP_SAMPLE_BYTES = 32 * 1024;

async function startHeapProfile(cdp: CDPSession, path: string): Promise<Profiling> {
  await cdp.send('HeapProfiler.enable');
  await cdp.send('HeapProfiler.startSampling', {
    samplingInterval: HEAP_SAMPLE_BYTES,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return {
    async stop(): Promise<void> {
      const { profile } = await cdp.send('HeapProfiler.stopSampling');
      writeFileSync(path, JSON.stringify(profile));
      await cdp.detach();
      console.log(`  heap allocation profile of the ${PROFILED[PROFILE_AT]} written to ${path}`);
    },
  };
}

/** Starts a CPU profile (100 µs samples), a trace or a heap allocation profile of `page`, or nothing when not asked for. */
export async function startProfile(page: Page): Promise<Profiling | undefined> {
  const path = PROFILE_PATH;
  if (!path) return undefined;
  const cdp = await page.context().newCDPSession(page);
  if (path.endsWith('.json')) return startTrace(cdp, path);
  if (path.endsWith('.heapprofile')) return startHeapProfile(cdp, path);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
  await cdp.send('Profiler.start');
  return {
    async stop(): Promise<void> {
      const { profile } = await cdp.send('Profiler.stop');
      writeFileSync(path, JSON.stringify(profile));
      await cdp.detach();
      console.log(`  cpu profile of the ${PROFILED[PROFILE_AT]} written to ${path}`);
    },
  };
}
