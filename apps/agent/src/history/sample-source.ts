/**
 * Where a samples query is answered: the in-memory ring while it still holds every sample of the
 * seconds asked for (the recent past, the cheapest), else the archive on disk. Each answer says
 * which samples its source keeps (`kept`), so a page can tell an empty cell's true reason: no
 * samples recorded, seconds no longer kept, thinned with age, or none of the cell's I/Os sampled.
 */
import type { SamplesKept as SamplesKeptField } from '@blkheat/shared-types';
import { ARCHIVE_CURSOR_BASE, type SampleArchive } from './sample-archive.js';
import type { SampleAnswer, SampleQuery, SampleStore } from './samples.js';

export interface KeptAnswer extends SampleAnswer {
  readonly kept: SamplesKeptField;
}

export class SampleSource {
  /**
   * Completion time (µs) before which the disk has samples the ring never had: those of an
   * earlier run, up to the newest second it recorded.
   */
  private readonly earlierRunUs: number;

  /**
   * @param ring made with this source, before any sample: it holds this run's samples.
   * @param budgetPerSecond the kernel's samples per second (--samples-budget; 0: none are taken).
   */
  constructor(
    readonly ring: SampleStore,
    readonly archive: SampleArchive | undefined,
    readonly budgetPerSecond: number,
  ) {
    const newest = archive?.newestRecorded;
    this.earlierRunUs = newest === undefined ? Number.NEGATIVE_INFINITY : (newest + 1) * 1e6;
  }

  /** Samples held in memory. */
  get count(): number {
    return this.ring.count;
  }

  query(q: SampleQuery): KeptAnswer {
    const budget = this.budgetPerSecond;
    const archive = this.archive;
    const fromArchive =
      archive !== undefined &&
      (q.after !== undefined ? q.after >= ARCHIVE_CURSOR_BASE : q.from * 1e6 < this.earlierRunUs || !this.ring.holdsAllSince(q.from * 1e6));
    if (archive && fromArchive) {
      const { kept, ...answer } = archive.query(q);
      return { ...answer, kept: { ...kept, budget } };
    }
    const since = archive?.keptFor(q.from).since ?? this.ring.heldSince;
    return { ...this.ring.query(q), kept: { step: 1, since, budget } };
  }
}
