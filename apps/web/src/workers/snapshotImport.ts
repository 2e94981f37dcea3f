/**
 * Reads, parses and validates a snapshot file off the main thread (snapshotImport.worker.ts):
 * the page stays responsive and no task of its own runs long for a file of tens of MB. Where
 * workers cannot start (they are blocked, or the bundle has none), it parses on the page.
 */
import type { ParseResult, Snapshot } from '@blkheat/shared-types';
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

function onThePage(file: File): Promise<ParseResult<Snapshot>> {
  return file.text().then(importSnapshotText, (e: unknown) => ({ ok: false, message: e instanceof Error ? e.message : String(e) }));
}

/** The snapshot in `file`, or a message for people. Never rejects. */
export function parseSnapshotFile(file: File): Promise<ParseResult<Snapshot>> {
  const worker = startWorker();
  if (!worker) return onThePage(file);
  return new Promise<ParseResult<Snapshot>>((resolve) => {
    const parts = new SnapshotAssembler();
    let heard = false;
    const finish = (r: ParseResult<Snapshot> | Promise<ParseResult<Snapshot>>): void => {
      worker.terminate();
      resolve(r);
    };
    worker.onmessage = (ev: MessageEvent<WorkerReply>) => {
      heard = true;
      const m = ev.data;
      if (m.t === 'error') finish({ ok: false, message: m.message });
      else if (m.t === 'done') {
        const snapshot = parts.result();
        finish(snapshot ? { ok: true, value: snapshot } : { ok: false, message: 'the snapshot reader sent no snapshot' });
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
