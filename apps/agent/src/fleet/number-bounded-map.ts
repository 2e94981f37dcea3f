/**
 * Values kept by key up to a bound on the numbers they hold, the first kept out first (Map
 * order): the fleet server's caches of Prometheus' final answers (fleet-row-cache.ts,
 * fleet-ranking-chunks.ts) are bounded by their numbers, ~8 bytes each, not by their entries,
 * which differ a thousandfold in size.
 */
export class NumberBoundedMap<V> {
  private readonly entries = new Map<string, V>();
  private total = 0;

  constructor(
    private readonly maxNumbers: number,
    private readonly numbersOf: (value: V) => number,
  ) {}

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Keeps `value` as the newest (a value of the same key is replaced), then drops the oldest past the bound. */
  set(key: string, value: V): void {
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.total -= this.numbersOf(old);
      this.entries.delete(key);
    }
    this.entries.set(key, value);
    this.total += this.numbersOf(value);
    for (const [k, v] of this.entries) {
      if (this.total <= this.maxNumbers) break;
      this.entries.delete(k);
      this.total -= this.numbersOf(v);
    }
  }

  /** Over three quarters of the bound: a warm loop adds no more, so that keeping a span that does not fit never turns into asking for it again and again as it is dropped. */
  get nearlyFull(): boolean {
    return this.overThreeQuarters(this.total);
  }

  /** Whether `numbers` of what is kept fill over three quarters of the bound (nearlyFull's rule, for a part of it). */
  overThreeQuarters(numbers: number): boolean {
    return numbers > 0.75 * this.maxNumbers;
  }

  get count(): number {
    return this.entries.size;
  }

  get numbers(): number {
    return this.total;
  }
}
