// Snapshot import in headless chromium against the fake agent: a file whose frames all lie
// outside its range is refused with a message that says so; a ~50 MB file is read, parsed and
// validated in a worker, and leaves no main-thread task over 200 ms (Long Tasks API): the
// page builds the heat maps in one task and sums the range's summary one slice of frames per
// task after it (pipeline/visibleSummary.ts); the reader (a worker) is started before a file is
// picked, and a new one after each import. Screenshots in artifacts/web-browser/. Needs
// apps/web/dist and chromium.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { type BrowserSession, hook, idle, importSnapshot, screenshot, unexpectedErrors, waitLive } from '@blkheat/testkit';
import { jsonFile, openFakeAgent, skipWithoutDashboard, watchLongTasks } from '../fixtures/browser.ts';
import { syntheticSource } from '../fixtures/synthetic.ts';

const T0 = 1_700_000_000;
/** The bound: no main-thread task longer than this while a big snapshot imports. */
const LONG_TASK_MS = 200;

/** The fake agent and a live page on it, settled. */
async function openPage(t: TestContext): Promise<BrowserSession> {
  const { agent, session, page } = await openFakeAgent(t);
  await page.goto(agent.url);
  await waitLive(page, 20_000);
  await idle(page);
  return session;
}

test('snapshot import: a file whose frames all lie outside its range is refused, saying so', { timeout: 60_000 }, async (t) => {
  if (skipWithoutDashboard(t)) return;
  const small = syntheticSource().snapshot(T0, T0 + 60);
  const outsideFile = jsonFile(t, 'outside-snapshot.json', { ...small, frames: small.frames.map((f) => ({ ...f, ts: f.ts + 86400 })) });
  const s = await openPage(t);
  const page = s.page;
  await page.setInputFiles('[data-testid=import-input]', outsideFile);
  const error = page.locator('[data-testid=notice-error]').last();
  await error.waitFor({ state: 'visible', timeout: 20_000 });
  const text = (await error.textContent()) ?? '';
  assert.match(text, /Cannot import outside-snapshot\.json: frames: none of its \d+ frames lies inside its range 2023-11-14 22:13:20 UTC/);
  assert.equal((await hook(page).state()).mode, 'live', 'the page stays live');
  await screenshot(page, 'snapshot-import-outside-range', 'web-browser');
  assert.deepEqual(unexpectedErrors(s), []);
});

test('snapshot import: 50 MB with no main-thread task over 200 ms', { timeout: 180_000 }, async (t) => {
  if (skipWithoutDashboard(t)) return;
  // ~2.9 h of three busy disks with 2 samples per class and second: about 50 MB of JSON.
  const big = syntheticSource({ samplesPerClass: 2 }).snapshot(T0, T0 + 10_600, 'big');
  const bigFile = jsonFile(t, 'big-snapshot.json', big);
  const bytes = statSync(bigFile).size;
  assert.ok(bytes > 48 * 1024 * 1024, `a ~50 MB file (${(bytes / 1048576).toFixed(1)} MiB)`);
  const s = await openPage(t);
  const page = s.page;

  // Long tasks from here on (the page has settled: its own start-up is not counted).
  const watched = await watchLongTasks(page);
  const t0 = Date.now();
  await importSnapshot(page, bigFile, 60_000);
  await idle(page);
  const loadMs = Date.now() - t0;
  const longTasks = await watched();
  const st = await hook(page).state();
  assert.deepEqual(st.view, { from: T0, to: T0 + 10_600 }, 'the whole snapshot is on screen');
  const counts = await hook(page).counts();
  let expected = 0;
  for (const f of big.frames) for (const d of f.disks) if (d.dev === '7:0') for (const c of d.cls) expected += c.n;
  assert.equal(counts['7:0']?.completed, expected, 'every I/O of the file is on screen');
  await screenshot(page, 'snapshot-import-50mb', 'web-browser');
  const worst = Math.max(0, ...longTasks);
  t.diagnostic(`imported ${(bytes / 1048576).toFixed(1)} MiB in ${loadMs} ms; long tasks: [${longTasks.join(', ')}] ms`);
  assert.ok(worst <= LONG_TASK_MS, `no main-thread task over ${LONG_TASK_MS} ms (worst ${worst} ms: [${longTasks.join(', ')}])`);
  assert.deepEqual(unexpectedErrors(s), []);
});

/** A worker of the page (playwright's). */
type Worker = ReturnType<BrowserSession['page']['workers']>[number];

/** The page's workers that read snapshot files (workers/snapshotImport.worker.ts). */
function readers(s: BrowserSession): Worker[] {
  return s.page.workers().filter((w) => /snapshotImport\.worker/.test(w.url()));
}

/** Waits until exactly one reader is running, and not `old`; returns it. */
async function oneReader(s: BrowserSession, what: string, old?: Worker): Promise<Worker> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const now = readers(s);
    if (now.length === 1 && now[0] !== old) return now[0] as Worker;
    assert.ok(
      Date.now() < deadline,
      `${what}: ${now.length} snapshot readers${old && now.includes(old) ? ', the used one among them' : ''}`,
    );
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('snapshot import: the reader is started before a file is picked, and again after each import', { timeout: 90_000 }, async (t) => {
  if (skipWithoutDashboard(t)) return;
  const file = jsonFile(t, 'small-snapshot.json', syntheticSource().snapshot(T0, T0 + 120, 'small'));
  const s = await openPage(t);
  const page = s.page;
  // Started once the page is idle (requestIdleCallback, at most 5 s after start): a picked file
  // then waits for none of the worker's loading (bench/web's import).
  const first = await oneReader(s, 'a reader waiting before any file is picked');
  await importSnapshot(page, file, 30_000);
  assert.equal((await hook(page).state()).mode, 'snapshot');
  // The one that read the file has ended; the next import's has started.
  await oneReader(s, 'a new reader waiting after the import', first);
  assert.deepEqual(unexpectedErrors(s), []);
});
