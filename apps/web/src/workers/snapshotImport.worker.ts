/**
 * Worker: reads a snapshot file, parses and validates it (shared-types, via model/snapshot.ts)
 * and posts it back in parts (model/snapshotParts.ts), so the page's main thread never holds a
 * long task for a big file. Protocol: one File in; SnapshotPart messages then 'done', or one
 * 'error' (see snapshotImport.ts).
 */
import { importSnapshotText } from '../model/snapshot.js';
import { snapshotParts } from '../model/snapshotParts.js';
import type { WorkerReply } from './snapshotImport.js';

const post = (msg: WorkerReply): void => (self as unknown as { postMessage(m: WorkerReply): void }).postMessage(msg);

self.onmessage = (ev: MessageEvent<File>) => {
  void (async () => {
    try {
      const r = importSnapshotText(await ev.data.text());
      if (!r.ok) {
        post({ t: 'error', message: r.message });
        return;
      }
      for (const part of snapshotParts(r.value)) post(part);
      post({ t: 'done' });
    } catch (e) {
      post({ t: 'error', message: e instanceof Error ? e.message : String(e) });
    }
  })();
};
