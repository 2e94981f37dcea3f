/**
 * Every record the agent reads from or writes to the kernel programs, field by field, as the
 * decoders in layout.ts use them, checked against the kernel object's own BTF before it is
 * loaded: a blkheat.h changed without its decoder (or an object from another build) is refused
 * with the struct and field named, instead of being read wrongly.
 */
import type { StructLayout } from '@blkheat/bpf-loader';
import {
  BUDGET_SIZE,
  COMM_LEN,
  COUNTER_NAMES,
  COUNTERS_SIZE,
  DISK_COUNT_SIZE,
  DISK_COUNTS_SIZE,
  HIST_DEVICE_OFFSET,
  HIST_BYTES_OFFSET,
  HIST_ERRORS_OFFSET,
  HIST_MAX_BUCKET_OFFSET,
  HIST_KEY_SIZE,
  HIST_REQUEUES_OFFSET,
  INFLIGHT_DISK_SIZE,
  INFLIGHT_IO_SIZE,
  INFLIGHT_KEPT_SIZE,
  INFLIGHT_SUMMARY_SIZE,
  NR_STATUS,
  RQ_SLOT_SIZE,
  SAMPLE_SIZE,
  SETTINGS_SIZE,
  type SchemaLayout,
} from './layout.js';
import { REQUEST_BITS_FIELDS, REQUEST_BITS_SIZE } from './request-bits.js';

/** [field, byte offset, byte size] */
type Field = readonly [string, number, number];

export interface RecordLayout {
  readonly size: number;
  readonly fields: readonly Field[];
}

/** The structs of blkheat.h the agent decodes or encodes, for an object built for `layout`'s schema. */
export function expectedRecords(layout: SchemaLayout): ReadonlyMap<string, RecordLayout> {
  const n = layout.nrBuckets;
  const u64s = (names: readonly string[]): Field[] => names.map((name, i) => [name, i * 8, 8]);
  return new Map<string, RecordLayout>([
    [
      'bh_hist_key',
      {
        size: HIST_KEY_SIZE,
        fields: [
          ['slot', 0, 4],
          ['dev', 4, 4],
          ['cls', 8, 2],
          ['size_log2', 10, 1],
          ['cgroup', 16, 8],
        ],
      },
    ],
    [
      'bh_hist',
      {
        size: layout.histValueSize,
        fields: [
          ...u64s(['count', 'dropped', 'missed']),
          ['requeues', HIST_REQUEUES_OFFSET, 8],
          ['bytes', HIST_BYTES_OFFSET, 8],
          ['max_bucket_plus1', HIST_MAX_BUCKET_OFFSET, 4],
          ['errors', HIST_ERRORS_OFFSET, NR_STATUS * 8],
          ['device', HIST_DEVICE_OFFSET, n * 8],
          ['queue', HIST_DEVICE_OFFSET + n * 8, n * 8],
        ],
      },
    ],
    [
      'bh_sample',
      {
        size: SAMPLE_SIZE,
        fields: [
          ...u64s(['ts_ns', 'sector', 'queue_ns', 'device_ns', 'cgroup_id']),
          ['dev', 40, 4],
          ['bytes', 44, 4],
          ['pid', 48, 4],
          ['cls', 52, 2],
          ['flags', 54, 2],
          ['comm', 56, COMM_LEN],
          ['slot', 72, 4],
        ],
      },
    ],
    ['bh_budget', { size: BUDGET_SIZE, fields: u64s(['slot', 'outliers', 'fair']) }],
    ['bh_counters', { size: COUNTERS_SIZE, fields: u64s(COUNTER_NAMES.map(snakeCase)) }],
    ['bh_rq_slot', { size: RQ_SLOT_SIZE, fields: u64s(['key', 'issue_ns', 'pid_tgid', 'task']) }],
    [
      'bh_inflight_summary',
      {
        size: INFLIGHT_SUMMARY_SIZE,
        fields: [
          ['now_ns', 0, 8],
          ['found', 8, 4],
          ['listed', 12, 4],
        ],
      },
    ],
    [
      'bh_inflight_io',
      {
        size: INFLIGHT_IO_SIZE,
        fields: [
          ...u64s(['start_ns', 'issue_ns', 'sector']),
          ['dev', 24, 4],
          ['bytes', 28, 4],
          ['pid', 32, 4],
          ['cls', 36, 2],
          ['comm', 40, COMM_LEN],
        ],
      },
    ],
    [
      'bh_disk_count',
      {
        size: DISK_COUNT_SIZE,
        fields: [
          ['dev', 0, 4],
          ['used', 4, 4],
          ['n', 8, 32],
        ],
      },
    ],
    ['bh_disk_counts', { size: DISK_COUNTS_SIZE, fields: [['e', 0, DISK_COUNTS_SIZE]] }],
    ['bh_inflight_disk', { size: INFLIGHT_DISK_SIZE, fields: u64s(['count', 'oldest_start_ns']) }],
    ['bh_inflight_kept', { size: INFLIGHT_KEPT_SIZE, fields: u64s(['start_ns', 'sector', 'issue_ns', 'pid_tgid', 'task']) }],
    [
      'bh_settings',
      {
        size: SETTINGS_SIZE,
        fields: [
          ['wall_offset_ns', 0, 8],
          ['fair_threshold', 8, 4],
          ['fair_budget', 12, 4],
          ['outlier_budget', 16, 4],
        ],
      },
    ],
    ['bh_request_bits', { size: REQUEST_BITS_SIZE, fields: REQUEST_BITS_FIELDS.map((name, i) => [name, i * 4, 4]) }],
  ]);
}

/**
 * What differs between the records the agent expects and the object's BTF (`lookup` answers a
 * struct name), one line per struct or field; empty when they agree.
 */
export function recordMismatches(
  expected: ReadonlyMap<string, RecordLayout>,
  lookup: (struct: string) => StructLayout | undefined,
): string[] {
  const problems: string[] = [];
  for (const [struct, want] of expected) {
    const have = lookup(struct);
    if (!have) {
      problems.push(`struct ${struct} is missing`);
      continue;
    }
    if (have.size !== want.size) problems.push(`struct ${struct} is ${have.size} bytes, expected ${want.size}`);
    for (const [field, offset, size] of want.fields) {
      const m = have.members.find((x) => x.name === field);
      if (!m) problems.push(`struct ${struct} has no field ${field}`);
      else if (m.offset !== offset || m.size !== size)
        problems.push(`struct ${struct} field ${field} is at byte ${m.offset}, ${m.size} bytes; expected byte ${offset}, ${size} bytes`);
    }
  }
  return problems;
}

function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
