/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Record layout shared by loader_test.bpf.c and the bpf-loader tests (which decode it by hand:
 * keep the offsets below in sync with packages/bpf-loader/test/helpers.ts).
 */
#ifndef LOADER_TEST_H
#define LOADER_TEST_H

/* One ring-buffer record per completed request, 24 bytes, little endian:
 *   0  u64 ts        bpf_ktime_get_ns() at completion
 *   8  u64 sector    first sector of the request
 *  16  u32 dev       kernel dev_t of the disk: major << 20 | first_minor
 *  20  u32 nr_bytes  bytes completed
 */
struct loader_test_event {
	__u64 ts;
	__u64 sector;
	__u32 dev;
	__u32 nr_bytes;
};

#define LOADER_TEST_MAX_DISKS 64
#define LOADER_TEST_SCRATCH_ENTRIES 1024

#endif /* LOADER_TEST_H */
