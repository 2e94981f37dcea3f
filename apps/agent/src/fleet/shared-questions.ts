/**
 * Identical questions under way share one answer. Pages following a big fleet live ask for the
 * ranked table of the same range at the same scrape (their range is taken in whole scrape
 * intervals: apps/web model/fleetRanking.ts rankingRange), and each would otherwise have
 * Prometheus read every host's newest minutes again: ten people opening the fleet page in an
 * incident cost what one does. Only questions under way are shared, no answer is kept after it
 * came: the range's newest scrapes may still land, and the next question reads them.
 */

/** Questions under way at most; past it a question is asked on its own (nothing is refused). */
export const MAX_OPEN_QUESTIONS = 64;

export interface SharedAnswer<A> {
  readonly answer: A;
  /** Another caller's question was under way: nothing was asked for this one. */
  readonly joined: boolean;
}

export class SharedQuestions<Q, A> {
  private readonly open = new Map<string, Promise<A>>();

  constructor(
    private readonly ask: (question: Q) => Promise<A>,
    private readonly keyOf: (question: Q) => string = (q) => JSON.stringify(q),
  ) {}

  async answer(question: Q): Promise<SharedAnswer<A>> {
    const key = this.keyOf(question);
    const under = this.open.get(key);
    if (under) return { answer: await under, joined: true };
    const asked = this.ask(question);
    if (this.open.size >= MAX_OPEN_QUESTIONS) return { answer: await asked, joined: false };
    this.open.set(key, asked);
    try {
      return { answer: await asked, joined: false };
    } finally {
      this.open.delete(key);
    }
  }

  /** Questions under way now. */
  get size(): number {
    return this.open.size;
  }
}
