/**
 * Worker: reads a snapshot file, parses and validates it (shared-types, via model/snapshot.ts)
 * and posts it back in parts (model/snapshotParts.ts), so the page's main thread never holds a
 * long task for a big file. Protocol: one File in, then one SnapshotPart out for each 'next' the
 * page sends, and 'done' after the last; or one 'error' (see snapshotImport.ts).
 */
import { importSnapshotText } from '../model/snapshot.js';
import { snapshotParts, type SnapshotPart } from '../model/snapshotParts.js';
import type { WorkerReply, WorkerRequest } from './snapshotImport.js';

const post = (msg: WorkerReply): void => (self as unknown as { postMessage(m: WorkerReply): void }).postMessage(msg);

/** The parts not sent yet, while the page takes them one at a time. */
let parts: Iterator<SnapshotPart> | undefined;

/** The next part, or 'done' after the last. */
function sendNext(): void {
  const next = parts?.next();
  if (!next || next.done) {
    parts = undefined;
    post({ t: 'done' });
  } else post(next.value);
}

self.onmessage = (ev: MessageEvent<WorkerRequest>) => {
  const request = ev.data;
  if (!(request instanceof Blob)) {
    sendNext();
    return;
  }
  void (async () => {
    try {
      const r = importSnapshotText(await request.text());
      if (!r.ok) {
        post({ t: 'error', message: r.message });
        return;
      }
      parts = snapshotParts(r.value);
      sendNext();
    } catch (e) {
      post({ t: 'error', message: e instanceof Error ? e.message : String(e) });
    }
  })();
};
