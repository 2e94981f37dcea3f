// Shared helpers for the loader's kernel tests (not a test file itself).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { BpfError, type BpfMap } from '../src/index.js';

const execFileAsync = promisify(execFile);

/** Built by `make -C bpf` from bpf/test/loader_test.bpf.c. */
export const OBJECT_PATH = fileURLToPath(new URL('../../../bpf/build/loader_test.bpf.o', import.meta.url));

export function objectPath(): string {
  assert.ok(existsSync(OBJECT_PATH), `${OBJECT_PATH} is missing: build it with make -C bpf`);
  return OBJECT_PATH;
}

/** The kernel's internal dev_t for a disk, as loader_test.bpf.c computes it: major << 20 | minor. */
export function kernelDev(major: number, minor: number): number {
  return ((major << 20) | minor) >>> 0;
}

export function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(value);
  return b;
}

export function u64(value: number | bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(value));
  return b;
}

export function readU64(buffer: Buffer, offset = 0): number {
  return Number(buffer.readBigUInt64LE(offset));
}

/** A u64 counter in a map, 0 when the key is absent. */
export function counter(map: BpfMap, key: Buffer): number {
  const value = map.lookup(key);
  return value === undefined ? 0 : readU64(value);
}

/** struct loader_test_event (bpf/test/loader_test.h), 24 bytes. */
export interface LoaderEvent {
  readonly ts: bigint;
  readonly sector: number;
  readonly dev: number;
  readonly nrBytes: number;
}

export const EVENT_SIZE = 24;

export function decodeEvent(record: Buffer): LoaderEvent {
  assert.equal(record.length, EVENT_SIZE, `ring buffer record is ${record.length} bytes, expected ${EVENT_SIZE}`);
  return {
    ts: record.readBigUInt64LE(0),
    sector: Number(record.readBigUInt64LE(8)),
    dev: record.readUInt32LE(16),
    nrBytes: record.readUInt32LE(20),
  };
}

/**
 * `count` sequential O_DIRECT reads of `blockSize` bytes from the start of a block device (one
 * request each), asynchronously so the event loop keeps running during the I/O.
 */
export async function directReads(device: string, count: number, blockSize = 4096, skipBlocks = 0): Promise<void> {
  await execFileAsync('dd', [
    `if=${device}`,
    'of=/dev/null',
    `bs=${blockSize}`,
    `count=${count}`,
    `skip=${skipBlocks}`,
    'iflag=direct',
    'status=none',
  ]);
}

export function openFdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

/** Asserts that fn throws a BpfError with this code (and message), and returns it. */
export function expectBpfError(fn: () => unknown, code: string, message?: RegExp): BpfError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  return checkBpfError(caught, code, message);
}

export async function expectBpfRejection(promise: Promise<unknown>, code: string, message?: RegExp): Promise<BpfError> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  return checkBpfError(caught, code, message);
}

function checkBpfError(caught: unknown, code: string, message?: RegExp): BpfError {
  assert.ok(caught instanceof BpfError, `expected a BpfError with code ${code}, got ${caught === undefined ? 'no error' : String(caught)}`);
  assert.equal(caught.name, 'BpfError');
  assert.equal(caught.code, code, `expected code ${code}: ${caught.message}`);
  assert.ok(Number.isInteger(caught.errno) && caught.errno > 0, `errno must be a positive integer, got ${caught.errno}`);
  assert.ok(caught.op.length > 0, 'op names the failing call');
  assert.ok(caught.message.includes(`(${code})`), `the message names the code ${code}: ${caught.message}`);
  if (message) assert.match(caught.message, message);
  return caught;
}
