/**
 * A strict parser of the Prometheus text exposition format 0.0.4, for checking /metrics.
 * Stricter than Prometheus itself on purpose: it throws (with the line number) on anything
 * the format does not allow or that would make a scrape ambiguous: malformed names, labels
 * or values, TYPE after samples or twice, a family's samples not grouped together, duplicate
 * series, missing final newline, and histograms whose buckets are not sorted, not cumulative,
 * lack +Inf, or disagree with _count.
 */

export type PromType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface PromSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
  readonly timestampMs?: number;
}

export interface PromFamily {
  readonly name: string;
  type: PromType;
  help?: string;
  readonly samples: PromSample[];
}

export class PromParseError extends Error {}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = new Set<PromType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** Parses Go-style floats as the format allows: decimal/exponent, NaN, +Inf, -Inf. */
export function parsePromValue(s: string): number | undefined {
  if (s === 'NaN') return NaN;
  if (s === '+Inf' || s === 'Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return undefined;
  return Number(s);
}

/** The family a sample name belongs to, given the TYPE lines seen so far. */
function familyOf(name: string, types: ReadonlyMap<string, PromType>): string {
  for (const suffix of ['_bucket', '_count', '_sum']) {
    if (name.endsWith(suffix)) {
      const base = name.slice(0, -suffix.length);
      const t = types.get(base);
      if (t === 'histogram' || (t === 'summary' && suffix !== '_bucket')) return base;
    }
  }
  return name;
}

export function parsePrometheusText(text: string): Map<string, PromFamily> {
  if (text.length > 0 && !text.endsWith('\n')) throw new PromParseError('exposition does not end with a newline');
  const families = new Map<string, PromFamily>();
  const types = new Map<string, PromType>();
  const seriesSeen = new Set<string>();
  const finished = new Set<string>();
  let current: string | undefined;
  const lines = text.split('\n');
  lines.pop();
  const family = (name: string): PromFamily => {
    let f = families.get(name);
    if (!f) {
      f = { name, type: 'untyped', samples: [] };
      families.set(name, f);
    }
    return f;
  };
  lines.forEach((line, i) => {
    const where = `line ${i + 1}`;
    const bad = (why: string): never => {
      throw new PromParseError(`${where}: ${why}: ${JSON.stringify(line.slice(0, 200))}`);
    };
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line);
      if (!m) return; // a plain comment
      const [, kind, name = '', rest = ''] = m;
      if (!METRIC_NAME.test(name) || (METRIC_NAME.exec(name)?.[0] ?? '') !== name) bad('bad metric name');
      const f = family(name);
      if (kind === 'TYPE') {
        if (types.has(name)) bad('second TYPE line for the metric');
        if (f.samples.length > 0) bad('TYPE after samples of the metric');
        if (!TYPES.has(rest.trim() as PromType)) bad('unknown type');
        f.type = rest.trim() as PromType;
        types.set(name, f.type);
      } else {
        if (f.help !== undefined) bad('second HELP line for the metric');
        f.help = rest.replace(/\\(\\|n)/g, (_m, c: string) => (c === 'n' ? '\n' : '\\'));
      }
      return;
    }
    const nameMatch = METRIC_NAME.exec(line);
    if (!nameMatch) bad('no metric name');
    const name = (nameMatch as RegExpExecArray)[0];
    let pos = name.length;
    const labels: Record<string, string> = {};
    if (line[pos] === '{') {
      pos++;
      for (;;) {
        if (line[pos] === '}') {
          pos++;
          break;
        }
        const ln = LABEL_NAME.exec(line.slice(pos));
        if (!ln) bad('bad label name');
        const lname = (ln as RegExpExecArray)[0];
        pos += lname.length;
        if (line[pos] !== '=' || line[pos + 1] !== '"') bad('expected ="');
        pos += 2;
        let value = '';
        for (;;) {
          const c = line[pos];
          if (c === undefined) bad('unterminated label value');
          if (c === '"') break;
          if (c === '\\') {
            const e = line[pos + 1];
            if (e === 'n') value += '\n';
            else if (e === '\\' || e === '"') value += e;
            else bad('bad escape in label value');
            pos += 2;
            continue;
          }
          value += c;
          pos++;
        }
        pos++;
        if (lname in labels) bad(`label ${lname} given twice`);
        labels[lname] = value;
        if (line[pos] === ',') pos++;
        else if (line[pos] !== '}') bad('expected , or }');
      }
    }
    const rest = line.slice(pos);
    const m = /^ +(\S+)(?: +(-?\d+))?\s*$/.exec(rest);
    if (!m) bad('expected " value [timestamp]"');
    const value = parsePromValue((m as RegExpExecArray)[1] as string);
    if (value === undefined) bad('bad sample value');
    const fam = familyOf(name, types);
    if (fam !== current) {
      if (current !== undefined) finished.add(current);
      if (finished.has(fam)) bad(`samples of ${fam} are not grouped together`);
      current = fam;
    }
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seriesSeen.has(key)) bad('duplicate series');
    seriesSeen.add(key);
    const ts = (m as RegExpExecArray)[2];
    family(fam).samples.push({ name, labels, value: value as number, ...(ts !== undefined ? { timestampMs: Number(ts) } : {}) });
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

/** Groups a histogram's samples by label set (without `le`), checking the histogram rules. */
export function checkHistogram(
  f: PromFamily,
): Map<string, { labels: Record<string, string>; buckets: [number, number][]; count: number; sum?: number }> {
  const out = new Map<string, { labels: Record<string, string>; buckets: [number, number][]; count: number; sum?: number }>();
  const get = (
    labels: Readonly<Record<string, string>>,
  ): { labels: Record<string, string>; buckets: [number, number][]; count: number; sum?: number } => {
    const rest: Record<string, string> = {};
    for (const [k, v] of Object.entries(labels)) if (k !== 'le') rest[k] = v;
    const key = JSON.stringify(Object.entries(rest).sort());
    let g = out.get(key);
    if (!g) {
      g = { labels: rest, buckets: [], count: NaN };
      out.set(key, g);
    }
    return g;
  };
  for (const s of f.samples) {
    if (s.name === `${f.name}_bucket`) {
      const le = s.labels.le;
      if (le === undefined) throw new PromParseError(`${f.name}: bucket without le`);
      const bound = parsePromValue(le);
      if (bound === undefined || Number.isNaN(bound)) throw new PromParseError(`${f.name}: bad le "${le}"`);
      get(s.labels).buckets.push([bound, s.value]);
    } else if (s.name === `${f.name}_count`) get(s.labels).count = s.value;
    else if (s.name === `${f.name}_sum`) get(s.labels).sum = s.value;
    else throw new PromParseError(`${f.name}: unexpected sample ${s.name} in a histogram`);
  }
  for (const g of out.values()) {
    const where = `${f.name}${JSON.stringify(g.labels)}`;
    for (let i = 1; i < g.buckets.length; i++) {
      const [pb, pc] = g.buckets[i - 1] as [number, number];
      const [b, c] = g.buckets[i] as [number, number];
      if (!(b > pb)) throw new PromParseError(`${where}: le values not strictly increasing (${pb}, ${b})`);
      if (c < pc) throw new PromParseError(`${where}: bucket counts not cumulative at le=${b}`);
    }
    const last = g.buckets[g.buckets.length - 1];
    if (!last || last[0] !== Infinity) throw new PromParseError(`${where}: no +Inf bucket`);
    if (Number.isNaN(g.count)) throw new PromParseError(`${where}: no _count`);
    if (last[1] !== g.count) throw new PromParseError(`${where}: +Inf bucket ${last[1]} != _count ${g.count}`);
  }
  return out;
}
