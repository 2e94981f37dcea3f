/**
 * The kernel ABI of the objects bpf/ built, as the agent reads it (readKernelAbi: from their BTF,
 * without loading anything), for tests that encode or decode kernel records by hand.
 */
import { BUCKET_SCHEMA, FINE_BUCKET_SCHEMA } from '@blkheat/shared-types';
import { readKernelAbi, type KernelAbi } from '../../src/collector/abi/kernel-abi.js';
import { objectPathFor } from '../../src/collector/loader.js';

/** blkheat.bpf.o: bucket schema scale 2. */
export const ABI: KernelAbi = readKernelAbi(objectPathFor(BUCKET_SCHEMA));
/** blkheat_s3.bpf.o: bucket schema scale 3. */
export const ABI_S3: KernelAbi = readKernelAbi(objectPathFor(FINE_BUCKET_SCHEMA));
