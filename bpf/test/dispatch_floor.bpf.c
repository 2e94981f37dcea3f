// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cost floor of tracing block I/O at all: empty programs on the tracepoints blkheat uses
 * for a blk-mq I/O (block_rq_issue, block_rq_complete; block_bio_queue is attached only while
 * a bio-based disk is traced). bench/kernel.ts runs it beside blkheat and bpftrace, so "IOPS kept" and
 * "BPF ns per I/O" can be read against what merely attaching costs on the machine.
 *
 * The clock_* pair adds one bpf_ktime_get_ns() to each: the least any tool that times
 * issue -> complete with its own clock pays (bpftrace's one-liner and blkheat both read the clock
 * once in each). bench/kernel attaches one pair at a time, by name prefix.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/block_rq_issue")
int BPF_PROG(floor_rq_issue, struct request *rq)
{
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(floor_rq_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(clock_rq_issue, struct request *rq)
{
	bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(clock_rq_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	bpf_ktime_get_ns();
	return 0;
}
