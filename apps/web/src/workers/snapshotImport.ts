/**
 * Reads, parses and validates a snapshot file off the main thread (snapshotImport.worker.ts):
 * the page stays responsive and no task of its own runs long for a file of tens of MB. Where
 * workers cannot start (they are blocked, or the bundle has none), it parses on the page.
 */
import type { Snapshot } from '@blkheat/shared-types';
import { SourceActivity } from '../model/activity.js';
import { importSnapshotText } from '../model/snapshot.js';
import { SnapshotAssembler, type SnapshotPart } from '../model/snapshotParts.js';

export type WorkerReply = SnapshotPart | { readonly t: 'done' } | { readonly t: 'error'; readonly message: string };
/**
 * To the worker: the file, then 'next' each time the page has taken a part. One part at a time,
 * so that the worker writing the next part and the page parsing this one never run at once: on
 * two CPUs their garbage collectors' parallel scavenges then wait on each other, and one of the
 * page's took 205 ms inside a part's task (the 50 MB file of snapshot-import.test.ts).
 */
export type WorkerRequest = File | 'next';

function startWorker(): Worker | undefined {
  try {
    return new Worker(new URL('./snapshotImport.worker.ts', import.meta.url), { type: 'module', name: 'snapshot import' });
  } catch {
    return undefined;
  }
}

/**
 * A reader started before any file is picked (warmSnapshotReader), for the next import to take:
 * loading and running the worker's code (building its validators) took ~135 ms of bench/web's
 * import on two CPUs, between the file being handed over and the first byte read.
 */
let spare: Worker | undefined;

/**
 * Starts the next import's reader once the page is idle (at start, app.ts; and after each
 * import). At most one waits; it holds no file until one is picked.
 */
export function warmSnapshotReaderWhenIdle(): void {
  if (typeof requestIdleCallback === 'function') requestIdleCallback(warmSnapshotReader, { timeout: 5000 });
  else setTimeout(warmSnapshotReader, 1000);
}

function warmSnapshotReader(): void {
  if (spare) return;
  const w = startWorker();
  if (!w) return;
  // One that fails to start before it is taken is dropped; the import then starts its own.
  w.onerror = (ev) => {
    ev.preventDefault();
    w.terminate();
    if (spare === w) spare = undefined;
  };
  spare = w;
}

/** The warm reader if there is one, else a new one. */
function takeWorker(): Worker | undefined {
  const w = spare ?? startWorker();
  spare = undefined;
  return w;
}

/** A snapshot read from a file, with what its frames say (gathered as it arrived); or a message for people. */
export type ImportedSnapshot =
  { readonly ok: true; readonly value: Snapshot; readonly activity: SourceActivity } | { readonly ok: false; readonly message: string };

function onThePage(file: File): Promise<ImportedSnapshot> {
  return file.text().then(
    (text): ImportedSnapshot => {
      const r = importSnapshotText(text);
      if (!r.ok) return r;
      const activity = new SourceActivity();
      activity.note(r.value.frames);
      return { ok: true, value: r.value, activity };
    },
    (e: unknown) => ({ ok: false, message: e instanceof Error ? e.message : String(e) }),
  );
}

/** The snapshot in `file`, or a message for people. Never rejects. */
export function parseSnapshotFile(file: File): Promise<ImportedSnapshot> {
  const worker = takeWorker();
  if (!worker) return onThePage(file);
  return new Promise<ImportedSnapshot>((resolve) => {
    const parts = new SnapshotAssembler();
    let heard = false;
    const finish = (r: ImportedSnapshot | Promise<ImportedSnapshot>): void => {
      worker.terminate();
      resolve(r);
      warmSnapshotReaderWhenIdle();
    };
    worker.onmessage = (ev: MessageEvent<WorkerReply>) => {
      heard = true;
      const m = ev.data;
      if (m.t === 'error') finish({ ok: false, message: m.message });
      else if (m.t === 'done') {
        const snapshot = parts.result();
        finish(
          snapshot
            ? { ok: true, value: snapshot, activity: parts.activity }
            : { ok: false, message: 'the snapshot reader sent no snapshot' },
        );
      } else {
        parts.add(m);
        worker.postMessage('next' satisfies WorkerRequest);
      }
    };
    worker.onerror = (ev) => {
      ev.preventDefault();
      // A worker that never started (blocked by policy, say): slower on the page, but it imports.
      if (!heard) finish(onThePage(file));
      else finish({ ok: false, message: `the snapshot reader failed${ev.message ? ` (${ev.message})` : ''}` });
    };
    // A File is a handle: the worker reads the bytes itself, they never pass through this thread.
    worker.postMessage(file satisfies WorkerRequest);
  });
}
