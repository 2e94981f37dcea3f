/**
 * Work the data layer has under way (fetches in flight, loads waiting out their debounce,
 * heat maps built over several tasks, a file being imported or exported): the test hook's
 * idle() waits until there is none. One counter shared by the pipeline's parts, changed only
 * through `start()` and `during()`.
 * In pipeline/: the parts share it (dataLayer.ts makes the one counter).
 */
export class Busy {
  private count = 0;

  get pending(): number {
    return this.count;
  }

  /** Counts one piece of work until the returned function is called (once; later calls do nothing). */
  start(): () => void {
    this.count++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.count--;
    };
  }

  /** Counts `work` until it settles. */
  async during<T>(work: () => Promise<T>): Promise<T> {
    const done = this.start();
    try {
      return await work();
    } finally {
      done();
    }
  }
}
