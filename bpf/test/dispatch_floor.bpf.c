// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cost floor of tracing block I/O at all: empty programs on the tracepoints blkheat attaches
 * for a blk-mq I/O. bench/kernel.ts runs them beside blkheat and bpftrace, so "IOPS kept" and
 * "BPF ns per I/O" can be read against what merely attaching costs on the machine. It attaches
 * programs by name prefix, in two sets:
 *
 *   floor_*     block_rq_issue, block_rq_complete, block_rq_requeue: the hooks of blkheat
 *               without its submit phase (and of bpftrace's issue -> complete one-liner, which
 *               has no requeue: that one never fires on bench/kernel's loop device).
 *   floorsub_*  what the submit phase (on by default) adds: block_bio_queue, block_getrq,
 *               block_bio_complete (every bio's end), block_split, block_bio_backmerge and
 *               block_bio_frontmerge (rare). floor_* + floorsub_* = every hook blkheat attaches.
 *
 * The clock floor, clock_* and clocksub_* on the same hooks, adds one bpf_ktime_get_ns() where
 * an exact timer of those hooks must read the clock: the submission (block_bio_queue), the
 * request's start (block_getrq), issue and completion. It is the least any tool that times
 * those spans with its own clock pays (bpftrace's one-liners and blkheat each read the clock
 * there). Where blkheat reads no clock (a requeue, a bio's end: bi_status only, splits and
 * merges) its programs stay empty, as the floor's.
 *
 * bio-based disks' hooks are not here: blkheat attaches them only while such a disk is traced.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/* ---- floor_*: the request hooks, empty ---- */

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

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(floor_rq_requeue, struct request *rq)
{
	return 0;
}

/* ---- floorsub_*: the submit phase's hooks, empty ---- */

SEC("tp_btf/block_bio_queue")
int BPF_PROG(floorsub_bio_queue, struct bio *bio)
{
	return 0;
}

SEC("tp_btf/block_getrq")
int BPF_PROG(floorsub_getrq, struct bio *bio)
{
	return 0;
}

SEC("tp_btf/block_bio_complete")
int BPF_PROG(floorsub_bio_complete, struct request_queue *q, struct bio *bio)
{
	return 0;
}

SEC("tp_btf/block_split")
int BPF_PROG(floorsub_split, struct bio *bio, unsigned int new_sector)
{
	return 0;
}

SEC("tp_btf/block_bio_backmerge")
int BPF_PROG(floorsub_backmerge, struct bio *bio)
{
	return 0;
}

SEC("tp_btf/block_bio_frontmerge")
int BPF_PROG(floorsub_frontmerge, struct bio *bio)
{
	return 0;
}

/* ---- clock_*: the request hooks, one clock read at issue and at completion ---- */

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

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(clock_rq_requeue, struct request *rq)
{
	return 0;
}

/* ---- clocksub_*: the submit phase's hooks, one clock read at submission and at getrq ---- */

SEC("tp_btf/block_bio_queue")
int BPF_PROG(clocksub_bio_queue, struct bio *bio)
{
	bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/block_getrq")
int BPF_PROG(clocksub_getrq, struct bio *bio)
{
	bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/block_bio_complete")
int BPF_PROG(clocksub_bio_complete, struct request_queue *q, struct bio *bio)
{
	return 0;
}

SEC("tp_btf/block_split")
int BPF_PROG(clocksub_split, struct bio *bio, unsigned int new_sector)
{
	return 0;
}

SEC("tp_btf/block_bio_backmerge")
int BPF_PROG(clocksub_backmerge, struct bio *bio)
{
	return 0;
}

SEC("tp_btf/block_bio_frontmerge")
int BPF_PROG(clocksub_frontmerge, struct bio *bio)
{
	return 0;
}
