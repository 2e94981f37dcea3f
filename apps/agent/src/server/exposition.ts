/**
 * What /metrics exposes, as a model: metric families, each with its samples or its latency
 * histograms (sparse, in the agent's bucket schema). Two renderers read it: the Prometheus text
 * format 0.0.4 here (classic histograms, `le` buckets), and the protobuf format
 * (native-histograms.ts: native histograms at the agent's own schema). A sample is filed under
 * its family whatever order it is added in, so every family's lines stay together.
 */
import { type BucketSchema, overflowIndex, upperBoundSeconds, type SparseHist } from '@blkheat/shared-types';

export const TEXT_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type Labels = Readonly<Record<string, string>>;
export type FamilyType = 'counter' | 'gauge' | 'histogram';

export interface Family {
  readonly name: string;
  readonly type: FamilyType;
  readonly help: string;
  readonly samples: { readonly labels: Labels; readonly value: number }[];
  /** Histogram families: cumulative counts per dense bucket of the schema (no sum: see metrics.ts). */
  readonly histograms: { readonly labels: Labels; readonly hist: SparseHist }[];
}

export class Exposition {
  private readonly byName = new Map<string, Family>();

  /** `constant` labels go on every series (the agent's instance). */
  constructor(
    readonly schema: BucketSchema,
    readonly constant: Labels = {},
  ) {}

  get families(): readonly Family[] {
    return [...this.byName.values()];
  }

  family(name: string, type: FamilyType, help: string): void {
    if (this.byName.has(name)) throw new Error(`metric family ${name} declared twice`);
    this.byName.set(name, { name, type, help, samples: [], histograms: [] });
  }

  /** A family with one sample (none while the value is not known yet). */
  single(name: string, type: 'counter' | 'gauge', help: string, value: number | null, labels: Labels = {}): void {
    this.family(name, type, help);
    if (value !== null) this.sample(name, labels, value);
  }

  sample(name: string, labels: Labels, value: number): void {
    this.of(name, 'sample').samples.push({ labels: { ...this.constant, ...labels }, value });
  }

  histogram(name: string, labels: Labels, hist: SparseHist): void {
    this.of(name, 'histogram').histograms.push({ labels: { ...this.constant, ...labels }, hist });
  }

  private of(name: string, what: string): Family {
    const f = this.byName.get(name);
    if (!f) throw new Error(`${what} of undeclared metric family ${name}`);
    return f;
  }
}

/** The text format: classic histograms with an `le` for every dense bucket below overflow, then +Inf. */
export function renderText(exposition: Exposition): string {
  const lines: string[] = [];
  const le = leValues(exposition.schema);
  for (const f of exposition.families) {
    lines.push(`# HELP ${f.name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples) lines.push(`${f.name}${formatLabels(s.labels)} ${formatValue(s.value)}`);
    for (const h of f.histograms) {
      let cum = 0;
      let k = 0;
      for (let i = 0; i < le.length; i++) {
        while (k < h.hist.length && (h.hist[k] as number) === i) {
          cum += h.hist[k + 1] as number;
          k += 2;
        }
        lines.push(`${f.name}_bucket${formatLabels({ ...h.labels, le: le[i] as string })} ${cum}`);
      }
      for (; k < h.hist.length; k += 2) cum += h.hist[k + 1] as number; // overflow
      lines.push(`${f.name}_bucket${formatLabels({ ...h.labels, le: '+Inf' })} ${cum}`, `${f.name}_count${formatLabels(h.labels)} ${cum}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

function formatLabels(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  return `{${entries.map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`).join(',')}}`;
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/** `le` label values of the dense buckets 0..overflow-1 (overflow is +Inf), per schema. Computed once each. */
const leBySchema = new Map<string, readonly string[]>();
function leValues(schema: BucketSchema): readonly string[] {
  const key = `${schema.scale}:${schema.minIndex}:${schema.maxIndex}`;
  let le = leBySchema.get(key);
  if (!le) leBySchema.set(key, (le = Array.from({ length: overflowIndex(schema) }, (_, i) => formatValue(upperBoundSeconds(i, schema)))));
  return le;
}
