/**
 * One full garbage collection, asked for after a burst of client work (server/read-scheduler.ts).
 * What a burst leaves is garbage: answers written, buffers of sockets gone. An agent that is idle
 * afterwards allocates little, so V8 may leave it for minutes, and the agent's memory stays as
 * high as the burst made it. Node offers no collection without --expose-gc at start; the flag
 * set at run time exposes `gc` to a new context, which is what this takes.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collect: (() => void) | null | undefined;

/** Runs a full collection; false where the runtime offers none. */
export function collectGarbage(): boolean {
  if (collect === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      const gc: unknown = runInNewContext('gc');
      collect = typeof gc === 'function' ? () => void gc() : null;
    } catch {
      collect = null;
    }
  }
  if (!collect) return false;
  collect();
  return true;
}
