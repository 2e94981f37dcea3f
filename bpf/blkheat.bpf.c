// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * blkheat: per-second block I/O latency histograms and sampled per-I/O records.
 *
 * Request-based (blk-mq) disks: device time = issue -> complete, queue time = start -> issue,
 * from the kernel's rq->start_time_ns / io_start_time_ns, and our own issue stamp where the
 * kernel's is missing or shares the plug's cached clock with the start. Bio-based disks (zram,
 * dm, md, bcache): block_bio_queue -> block_bio_complete.
 *
 * Histograms live in a table with one partition per CPU, keyed by (wall-clock second, disk,
 * class, size, cgroup) and probed inline (blkheat_maps.bpf.h): a second is only ever written while
 * it is current, so the agent reads and frees closed seconds without losing or double counting
 * anything at the boundary (iterate-then-delete of a live map, as biolatency does, loses the I/Os
 * that land between the read and the delete).
 *
 * Counting follows the kernel's own accounting rules (see H(rq_cls) and docs/accounting.md):
 * each I/O /proc/diskstats counts is counted once, at its final block_rq_complete, in the
 * second it completes. Completions no program saw (the kernel accounts a few for which no BPF
 * program on a block tracepoint runs; docs/accounting.md) are measured by the agent against
 * /proc/diskstats and shown as untimed; nothing here infers them.
 *
 * Every hook exists twice: tp_btf (typed BTF arguments, direct loads) and raw_tp (fallback,
 * BPF_CORE_READ). The agent enables one flavour at load time; where the tracepoint argument
 * layout differs (request_queue first, before 5.11) it picks the *_q programs, from BTF.
 *
 * This file holds the knobs and the programs; the rest is in include/: blkheat_bucket.bpf.h (the
 * latency buckets' knobs and lookup), blkheat_maps.bpf.h (the maps), blkheat_record.bpf.h (kernel
 * layout, class codes, recording a finished I/O), blkheat_submit.bpf.h (the submit phase's slots
 * and lookups), blkheat_handlers.bpf.h (the hook logic) and blkheat_inflight.bpf.h (the in-flight
 * scan).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "blkheat.h"

char LICENSE[] SEC("license") = "GPL";

/* ---- knobs, set by the agent before load ---- */

/* Histogram slot length (1 s). */
const volatile __u64 slot_ns = 1000000000ULL;
/* Time from the kernel's own rq->start_time_ns / io_start_time_ns instead of our stamps
 * (diagnostics, and how tests compare the two). */
const volatile bool kernel_times = false;
const volatile bool samples_enabled = true;
/* Time request-based I/O from its bio's submission (submit wait and total): block_bio_queue,
 * block_getrq, block_split and the bio merge hooks stamp bios (blkheat_handlers.bpf.h). */
const volatile bool submit_phase = true;
/* Trace only the disks in disk_filter (the agent's --disk); false = every disk. */
const volatile bool filter_disks = false;
/* The /proc/diskstats op group (index into bh_disk_count.n) of each req_op value below 64: the
 * agent's own rule (ClassNamer.group), so the two can never disagree. */
const volatile __u8 op_group[64] = {};
/* Tests only: every request of this disk (dev_t) takes per-request slot 0, so that its requests
 * take each other's slot (what a hash collision does, on demand). 0 = off: the verifier then
 * removes the disk lookup at issue as dead code (what stays is a load of the knob). */
const volatile __u32 shared_slot_dev = 0;
/* The kernel's request op and flag values (struct bh_request_bits), and the class flags of each
 * combination of request flags, from the agent (request-bits.ts). */
const volatile struct bh_request_bits req_bits = {};
const volatile __u16 cls_flag_table[1 << BH_CLS_FLAG_TABLE_BITS] = {};
/* raw_tp only: index of the request/bio argument (1 where request_queue came first). */
const volatile __u32 rq_arg_idx = 0;
/* Never read: it makes BTF describe blkheat.h's enums for the agent (struct bh_btf_enums). */
const volatile struct bh_btf_enums bh_btf_enums_anchor = {};

#include "blkheat_bucket.bpf.h"
#include "blkheat_maps.bpf.h"
#include "blkheat_record.bpf.h"
#include "blkheat_submit.bpf.h"
#include "blkheat_wbt.bpf.h"

/* ---- the two instantiations of the hook logic ---- */

#define ___bh_direct1(s, a) ((s)->a)
#define ___bh_direct2(s, a, b) ((s)->a->b)
#define ___bh_direct3(s, a, b, c) ((s)->a->b->c)
#define ___bh_direct4(s, a, b, c, d) ((s)->a->b->c->d)
#define ___bh_nth(_1, _2, _3, _4, _5, N, ...) N
#define ___bh_direct(...) ___bh_nth(__VA_ARGS__, ___bh_direct4, ___bh_direct3, ___bh_direct2, ___bh_direct1, _)(__VA_ARGS__)

#define READ(...) ___bh_direct(__VA_ARGS__)
#define H(name) name##_btf
#define COMM_BY_PID true
#include "blkheat_handlers.bpf.h"
#undef READ
#undef H
#undef COMM_BY_PID

#define READ(...) BPF_CORE_READ(__VA_ARGS__)
#define H(name) name##_raw
#define COMM_BY_PID false
#include "blkheat_handlers.bpf.h"
#undef READ
#undef H
#undef COMM_BY_PID

/* ---- tp_btf programs ---- */

SEC("tp_btf/block_rq_issue")
int BPF_PROG(bh_rq_issue_btf, struct request *rq)
{
	on_rq_issue_btf(rq);
	return 0;
}

/* Before 5.11, block_rq_issue/requeue and block_bio_queue passed the request_queue first. */
SEC("tp_btf/block_rq_issue")
int BPF_PROG(bh_rq_issue_btf_q, struct request_queue *q, struct request *rq)
{
	on_rq_issue_btf(rq);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(bh_rq_complete_btf, struct request *rq, int error, unsigned int nr_bytes)
{
	on_rq_complete_btf(rq, error, nr_bytes);
	return 0;
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(bh_rq_requeue_btf, struct request *rq)
{
	on_rq_requeue_btf(rq);
	return 0;
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(bh_rq_requeue_btf_q, struct request_queue *q, struct request *rq)
{
	on_rq_requeue_btf(rq);
	return 0;
}

SEC("tp_btf/block_bio_queue")
int BPF_PROG(bh_bio_queue_btf, struct bio *bio)
{
	on_bio_queue_btf(bio);
	return 0;
}

SEC("tp_btf/block_bio_queue")
int BPF_PROG(bh_bio_queue_btf_q, struct request_queue *q, struct bio *bio)
{
	on_bio_queue_btf(bio);
	return 0;
}

SEC("tp_btf/block_bio_complete")
int BPF_PROG(bh_bio_complete_btf, struct request_queue *q, struct bio *bio)
{
	on_bio_complete_btf(q, bio);
	return 0;
}

/* The submit phase's hooks (submit_phase): attached with the others where the tracepoints pass
 * the bio first (5.11 on). */
SEC("tp_btf/block_getrq")
int BPF_PROG(bh_bio_getrq_btf, struct bio *bio)
{
	on_bio_getrq_btf(bio);
	return 0;
}

SEC("tp_btf/block_bio_backmerge")
int BPF_PROG(bh_bio_backmerge_btf, struct bio *bio)
{
	on_bio_merge_btf(bio);
	return 0;
}

SEC("tp_btf/block_bio_frontmerge")
int BPF_PROG(bh_bio_frontmerge_btf, struct bio *bio)
{
	on_bio_merge_btf(bio);
	return 0;
}

SEC("tp_btf/block_split")
int BPF_PROG(bh_bio_split_btf, struct bio *bio, unsigned int new_sector)
{
	on_bio_split_btf(bio);
	return 0;
}

/* wbt closed a latency window (blkheat_wbt.bpf.h); the disk is its bdi's owner. */
SEC("tp_btf/wbt_timer")
int BPF_PROG(bh_wbt_timer_btf, struct backing_dev_info *bdi, unsigned int status, int step, unsigned int inflight)
{
	note_wbt_window(bdi, status, step);
	return 0;
}

/* ---- raw_tp programs (untyped arguments; layout chosen by rq_arg_idx) ---- */

SEC("raw_tp/block_rq_issue")
int bh_rq_issue_raw(struct bpf_raw_tracepoint_args *ctx)
{
	on_rq_issue_raw((struct request *)(rq_arg_idx ? ctx->args[1] : ctx->args[0]));
	return 0;
}

SEC("raw_tp/block_rq_complete")
int bh_rq_complete_raw(struct bpf_raw_tracepoint_args *ctx)
{
	on_rq_complete_raw((struct request *)ctx->args[0], (int)ctx->args[1], (unsigned int)ctx->args[2]);
	return 0;
}


SEC("raw_tp/block_rq_requeue")
int bh_rq_requeue_raw(struct bpf_raw_tracepoint_args *ctx)
{
	on_rq_requeue_raw((struct request *)(rq_arg_idx ? ctx->args[1] : ctx->args[0]));
	return 0;
}

SEC("raw_tp/block_bio_queue")
int bh_bio_queue_raw(struct bpf_raw_tracepoint_args *ctx)
{
	on_bio_queue_raw((struct bio *)(rq_arg_idx ? ctx->args[1] : ctx->args[0]));
	return 0;
}

SEC("raw_tp/block_getrq")
int bh_bio_getrq_raw(struct bpf_raw_tracepoint_args *ctx)
{
	on_bio_getrq_raw((struct bio *)ctx->args[0]);
	return 0;
}

SEC("raw_tp/block_bio_backmerge")
int bh_bio_backmerge_raw(struct bpf_raw_tracepoint_args *ctx)
{
	on_bio_merge_raw((struct bio *)ctx->args[0]);
	return 0;
}

SEC("raw_tp/block_bio_frontmerge")
int bh_bio_frontmerge_raw(struct bpf_raw_tracepoint_args *ctx)
{
	on_bio_merge_raw((struct bio *)ctx->args[0]);
	return 0;
}

SEC("raw_tp/block_split")
int bh_bio_split_raw(struct bpf_raw_tracepoint_args *ctx)
{
	on_bio_split_raw((struct bio *)ctx->args[0]);
	return 0;
}

SEC("raw_tp/wbt_timer")
int bh_wbt_timer_raw(struct bpf_raw_tracepoint_args *ctx)
{
	struct backing_dev_info *bdi = (struct backing_dev_info *)ctx->args[0];
	note_wbt_window(bdi, (unsigned int)ctx->args[1], (int)ctx->args[2]);
	return 0;
}

SEC("raw_tp/block_bio_complete")
int bh_bio_complete_raw(struct bpf_raw_tracepoint_args *ctx)
{
	on_bio_complete_raw((struct request_queue *)ctx->args[0], (struct bio *)ctx->args[1]);
	return 0;
}

#include "blkheat_inflight.bpf.h"
