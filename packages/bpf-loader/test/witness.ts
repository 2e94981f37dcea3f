// ftrace's completion witness (testkit's completionWitness) for the loader's kernel tests (not a
// test file itself). loader_test.bpf.o counts completions with BPF; on a kernel that runs no BPF
// program on top of pid 1's threads (bpf_prog_aux.init_owned, docs/accounting.md) a completion
// that runs in softirq on top of one of them is counted by dd and /proc/diskstats but never seen
// by the program. Each measured window runs under the witness, which counts exactly those: the
// BPF side may be short by them, and by no more.
import assert from 'node:assert/strict';
import { completionWitness, type CleanupContext, type CompletionWitness, type WitnessCount } from '@blkheat/testkit';
import { loadKernelBtf } from '../src/index.js';
import { directReads } from './helpers.js';

/** A disk the witness watches (a loop device). */
export interface WitnessedDisk {
  readonly name: string;
  /** "MAJ:MIN" */
  readonly dev: string;
  readonly path: string;
}

let hides: boolean | undefined;

/**
 * Whether this kernel runs no BPF program on top of pid 1's threads, read from BTF as the agent
 * reads it (KernelFacts.hidesInitContext): a sandbox patch adds bpf_prog_aux.init_owned.
 */
export function hidesInitContext(): boolean {
  if (hides === undefined) {
    const btf = loadKernelBtf();
    try {
      hides = btf.hasField('bpf_prog_aux', 'init_owned');
    } finally {
      btf.close();
    }
  }
  return hides;
}

/** One witness per test and disk, opened on first use and closed after the test. */
const witnesses = new WeakMap<CleanupContext, Map<string, CompletionWitness>>();

function witnessOf(t: CleanupContext, disk: WitnessedDisk): CompletionWitness {
  let byDev = witnesses.get(t);
  if (!byDev) {
    byDev = new Map();
    witnesses.set(t, byDev);
  }
  let witness = byDev.get(disk.dev);
  if (!witness) {
    witness = completionWitness(t, disk, hidesInitContext());
    byDev.set(disk.dev, witness);
  }
  return witness;
}

/**
 * Runs `io` (the window's I/O on `disk`, nothing else on it) under ftrace's witness of the disk's
 * completions and returns what the witness saw: `hiddenFromBpf` of them ran where no BPF program
 * runs on this kernel (0 on a kernel without the rule).
 */
export async function witnessed(t: CleanupContext, disk: WitnessedDisk, io: () => Promise<unknown>): Promise<WitnessCount> {
  const witness = witnessOf(t, disk);
  witness.start();
  try {
    await io();
  } catch (error) {
    witness.stop();
    throw error;
  }
  return witness.stop();
}

/**
 * `count` sequential 4 KiB O_DIRECT reads of `disk` (directReads: one request each) under the
 * witness. ftrace must have seen every one of them complete (the witness watched the whole
 * window, and nothing else ran on the disk); returns what it saw.
 */
export async function witnessedReads(t: CleanupContext, disk: WitnessedDisk, count: number, skipBlocks = 0): Promise<WitnessCount> {
  const seen = await witnessed(t, disk, () => directReads(disk.path, count, 4096, skipBlocks));
  assert.equal(seen.completions, count, `ftrace saw ${seen.completions} completions for ${count} dd reads of ${disk.name}: ${seen.text}`);
  return seen;
}

/**
 * Reads `count` blocks under the witness, again and again until a BPF program could see at least
 * one of a round's completions (at most 10 rounds): for a test that waits for a record. Returns
 * the reads done and how many of their completions no BPF program could see.
 */
export async function readsUntilOneSeen(t: CleanupContext, disk: WitnessedDisk, count: number): Promise<{ reads: number; hidden: number }> {
  let reads = 0;
  let hidden = 0;
  for (let round = 1; ; round++) {
    const seen = await witnessedReads(t, disk, count);
    reads += count;
    hidden += seen.hiddenFromBpf;
    if (seen.hiddenFromBpf < count) return { reads, hidden };
    assert.ok(round < 10, `${round} rounds of ${count} reads, every completion hidden from BPF: ${seen.text}`);
  }
}

/**
 * What a BPF program saw of an expected sequence (sectors in completion order) when `hidden` of
 * its completions ran where no program could see them: the whole sequence when none did, else
 * an in-order (so, for an increasing sequence, strictly increasing) subsequence of it, with
 * exactly `hidden` entries fewer.
 */
export function assertSeenOf(actual: readonly number[], expected: readonly number[], hidden: number, message: string): void {
  if (hidden === 0) {
    assert.deepEqual(actual, expected, message);
    return;
  }
  assert.equal(
    actual.length,
    expected.length - hidden,
    `${message}: ${actual.length} seen of ${expected.length}, ${hidden} hidden from BPF`,
  );
  let at = 0;
  for (const value of actual) {
    while (at < expected.length && expected[at] !== value) at++;
    assert.ok(at < expected.length, `${message}: ${value} is not expected, or out of order, in ${JSON.stringify(actual)}`);
    at++;
  }
}
