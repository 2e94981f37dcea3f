// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel's latency bucket lookup (include/blkheat_bucket.bpf.h) on its own, for the agent's
 * test that holds it to bucketOfNs (apps/agent/test/collector-buckets.test.ts): run with
 * BPF_PROG_TEST_RUN, the latency in the context, the bucket as the return value. Built for both
 * schemas, as blkheat.bpf.o is (bucket_test.bpf.o, bucket_test_s3.bpf.o).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "blkheat.h"
#include "blkheat_bucket.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct bucket_probe {
	__u64 ns;
};

SEC("syscall")
int bh_bucket_probe(struct bucket_probe *ctx)
{
	return bh_bucket_of(ctx->ns);
}
