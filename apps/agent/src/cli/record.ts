/**
 * `blkheat record`: per-interval latency histograms per disk and op class on stdout, as text
 * (like biolatency -D -F, at 4x finer buckets) or NDJSON.
 */
import { missingTracingPrivilege } from '@blkheat/bpf-loader';
import { type BucketSchema, formatLatency } from '@blkheat/shared-types';
import { createCollector, CollectorError, DEFAULT_SAMPLE_BUDGET, MAX_SAMPLE_BUDGET, type Collector } from '../collector/index.js';
import { recordLine } from '../record/format-json.js';
import { formatIntervalText } from '../record/format-text.js';
import { IntervalGrouper, type Interval } from '../record/intervals.js';
import { intArg, parseCommandFlags, parseSchemaFlag, UsageError } from '../service/flags.js';

export const summary = 'print per-interval latency histograms per disk and op class';

const HELP = `Usage: blkheat record [options]

Times every block I/O in the kernel (eBPF, no kprobes) and prints, every interval, a latency
histogram per disk and op class (Read, Sync-Write, Metadata-Read, Flush, ...) with count, p50
and p99. Buckets are base-2 exponential with 4 per power of two (Prometheus native-histogram
schema 2; --schema 3 for 8), 0.95 us to 64 s. Needs root.

Options:
  -i, --interval S        seconds per interval, wall-clock aligned (default 1, max 3600)
  -c, --count N           stop after N intervals (default: until Ctrl-C)
  -d, --disk NAME         only this disk (kernel name like vda, loop0, zram0, or MAJ:MIN);
                          repeat for several (default: every disk)
  -Q, --queued            also print the phases before the device: queue time (request start
                          -> issue), submit wait (bio submitted -> request allocated: frozen
                          queue, QoS, waiting for a tag) and total (bio submitted -> complete)
  -j, --json              one JSON object per interval per line (NDJSON, see docs/record-json.md)
  -s, --samples           with --json, include the sampled per-I/O records of each interval
      --samples-budget N  sampled records per second kept in the kernel (default ${DEFAULT_SAMPLE_BUDGET})
      --schema N          latency buckets: 2 = 4 per power of two (default), 3 = 8 per power of two
      --partitions        report partitions as their own disks (default: rolled up into the disk)
      --hooks KIND        tracepoint flavour: auto (default), tp_btf or raw_tp
      --issue-timestamps  own (default) or kernel: blkheat's own issue stamp where the kernel's
                          come from a plug's cached clock, or the kernel's only (diagnostics)
      --no-submit-wait    time request-based I/O from its request only: no submit wait or total,
                          and no programs on each bio (docs/accounting.md states their cost)
      --btf PATH          kernel BTF to use instead of /sys/kernel/btf/vmlinux (kernels
                          without built-in BTF, e.g. a file from BTFHub)
  -v, --verbose           print what is loaded and attached, and libbpf's log
  -h, --help              show this help
`;

interface RecordArgs {
  intervalS: number;
  count: number | undefined;
  disks: string[];
  queued: boolean;
  json: boolean;
  samples: boolean;
  samplesBudget: number;
  partitions: boolean;
  schema: BucketSchema;
  hooks: 'auto' | 'tp_btf' | 'raw_tp';
  issueTimestamps: 'kernel' | 'own';
  submitPhase: boolean;
  btf: string | undefined;
  verbose: boolean;
}

export function parseRecordArgs(argv: string[]): RecordArgs | 'help' {
  const v = parseCommandFlags('record', argv, {
    interval: { type: 'string', short: 'i' },
    count: { type: 'string', short: 'c' },
    disk: { type: 'string', short: 'd', multiple: true },
    queued: { type: 'boolean', short: 'Q' },
    json: { type: 'boolean', short: 'j' },
    samples: { type: 'boolean', short: 's' },
    'samples-budget': { type: 'string' },
    partitions: { type: 'boolean' },
    schema: { type: 'string' },
    hooks: { type: 'string' },
    'issue-timestamps': { type: 'string' },
    'no-submit-wait': { type: 'boolean' },
    btf: { type: 'string' },
    verbose: { type: 'boolean', short: 'v' },
    help: { type: 'boolean', short: 'h' },
  });
  if (v.help) return 'help';
  const hooks = v.hooks ?? 'auto';
  if (hooks !== 'auto' && hooks !== 'tp_btf' && hooks !== 'raw_tp')
    throw new UsageError(`--hooks must be auto, tp_btf or raw_tp, not '${hooks}'`);
  const issueTimestamps = v['issue-timestamps'] ?? 'own';
  if (issueTimestamps !== 'kernel' && issueTimestamps !== 'own')
    throw new UsageError(`--issue-timestamps must be own or kernel, not '${issueTimestamps}'`);
  if (v.samples && !v.json) throw new UsageError('--samples needs --json (text output has no room for per-I/O records)');
  return {
    intervalS: v.interval === undefined ? 1 : intArg('interval', v.interval, 1, 3600),
    count: v.count === undefined ? undefined : intArg('count', v.count, 1, Number.MAX_SAFE_INTEGER),
    disks: v.disk ?? [],
    queued: v.queued ?? false,
    json: v.json ?? false,
    samples: v.samples ?? false,
    samplesBudget:
      v['samples-budget'] === undefined ? DEFAULT_SAMPLE_BUDGET : intArg('samples-budget', v['samples-budget'], 0, MAX_SAMPLE_BUDGET),
    partitions: v.partitions ?? false,
    schema: parseSchemaFlag(v.schema),
    hooks,
    issueTimestamps,
    submitPhase: !(v['no-submit-wait'] ?? false),
    btf: v.btf,
    verbose: v.verbose ?? false,
  };
}

export async function run(argv: string[]): Promise<number> {
  let args: RecordArgs | 'help';
  try {
    args = parseRecordArgs(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`blkheat record: ${err.message}\nRun 'blkheat record --help' for usage.`);
      return 2;
    }
    throw err;
  }
  if (args === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  const privilege = missingTracingPrivilege();
  if (privilege) {
    console.error(`blkheat record: ${privilege}; run it with sudo`);
    return 1;
  }

  const log = (line: string): void => {
    if (args.verbose) console.error(`blkheat: ${line}`);
  };
  let collector: Collector;
  try {
    collector = await createCollector({
      disks: args.disks,
      samples: args.samplesBudget > 0 ? { budgetPerSecond: args.samplesBudget } : false,
      hooks: args.hooks,
      partitions: args.partitions,
      schema: args.schema,
      issueTimestamps: args.issueTimestamps,
      submitPhase: args.submitPhase,
      ...(args.btf ? { btf: args.btf } : {}),
      bpfStats: args.verbose,
      onLog: log,
    });
  } catch (err) {
    if (err instanceof CollectorError) {
      console.error(`blkheat record: ${err.message}`);
      return 1;
    }
    throw err;
  }

  const startedAt = Math.floor(Date.now() / 1000) + 1;
  const grouper = new IntervalGrouper(args.intervalS, startedAt, args.schema);
  console.error(
    `Tracing block I/O with ${collector.stats().hooks} hooks, ${args.intervalS} s intervals${args.count ? `, ${args.count} of them` : ''}... Hit Ctrl-C to end.`,
  );

  return new Promise<number>((resolve) => {
    let printed = 0;
    let stopping = false;
    const stop = (code: number): void => {
      if (stopping) return;
      stopping = true;
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      if (args.verbose) {
        const s = collector.stats();
        log(
          `${s.ios} I/Os, BPF ${s.bpfNsPerIo === null ? 'n/a' : formatLatency(s.bpfNsPerIo / 1e9)} per I/O, ${s.samplesLost} sample records lost`,
        );
      }
      collector.close().then(
        () => resolve(code),
        (err: unknown) => {
          console.error(`blkheat record: closing failed: ${err instanceof Error ? err.message : String(err)}`);
          resolve(1);
        },
      );
    };
    const onSignal = (): void => stop(0);
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);

    const print = (interval: Interval): void => {
      const names = new Map(collector.disks().map((d) => [d.dev, d.name]));
      if (args.json) {
        process.stdout.write(
          JSON.stringify(recordLine(interval.frame, names, args.intervalS, args.samples ? interval.samples : undefined, args.schema)) +
            '\n',
        );
      } else {
        process.stdout.write(
          formatIntervalText(interval.frame, names, args.intervalS, { queued: args.queued, schema: args.schema }) + '\n',
        );
      }
      printed++;
      if (args.count !== undefined && printed >= args.count) stop(0);
    };
    collector.listen({
      samples: (s) => grouper.addSamples(s),
      frame: (f) => {
        if (stopping) return;
        const interval = grouper.addFrame(f);
        if (interval) print(interval);
      },
      warning: (m) => console.error(`blkheat record: warning: ${m}`),
    });
  });
}
