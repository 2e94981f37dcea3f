// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * blkheat: per-second block I/O latency histograms and sampled per-I/O records.
 *
 * Request-based (blk-mq) disks: device time = issue -> complete, queue time = start -> issue,
 * from the kernel's rq->start_time_ns / io_start_time_ns, and our own issue stamp where the
 * kernel's is missing or shares the plug's cached clock with the start. Bio-based disks (zram,
 * dm, md, bcache): block_bio_queue -> block_bio_complete.
 *
 * Histograms live in a per-CPU hash keyed by (wall-clock second, disk, class): a second is
 * only ever written while it is current, so the agent reads and deletes closed seconds without
 * losing or double counting anything at the boundary (iterate-then-delete of a live map, as
 * biolatency does, loses the I/Os that land between the read and the delete).
 *
 * Counting follows the kernel's own accounting rules (see H(rq_cls) and docs/accounting.md):
 * each I/O /proc/diskstats counts is counted once, at its final block_rq_complete, in the
 * second it completes. Completions no program saw (the kernel accounts a few that no block
 * tracepoint shows) are measured by the agent against /proc/diskstats and shown as untimed;
 * nothing here infers them.
 *
 * Every hook exists twice: tp_btf (typed BTF arguments, direct loads) and raw_tp (fallback,
 * BPF_CORE_READ). The agent enables one flavour at load time; where the tracepoint argument
 * layout differs (request_queue first, before 5.11) it picks the *_q programs, from BTF.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "blkheat.h"

char LICENSE[] SEC("license") = "GPL";

/* ---- knobs, set by the agent before load ---- */

/* Upper bounds (ns, inclusive) of the regular buckets, ascending, padded with U64_MAX. */
const volatile __u64 bounds_ns[BH_MAX_BOUNDS] = {};
/* Histogram slot length (1 s). */
const volatile __u64 slot_ns = 1000000000ULL;
/* Time from the kernel's own rq->start_time_ns / io_start_time_ns instead of our stamps
 * (diagnostics, and how tests compare the two). */
const volatile bool kernel_times = false;
const volatile bool samples_enabled = true;
/* Trace only the disks in disk_filter (the agent's --disk); false = every disk. */
const volatile bool filter_disks = false;
/* raw_tp only: index of the request/bio argument (1 where request_queue came first). */
const volatile __u32 rq_arg_idx = 0;

/* ---- maps ---- */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct bh_hist_key);
	__type(value, struct bh_hist);
} hists SEC(".maps");

/* Zeroed value to insert new histogram keys from (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bh_hist);
} zero_hist SEC(".maps");

struct bh_bio_start {
	__u64 ts;
	__u64 sector;
	__u64 pid_tgid;
	__u64 task;
	__u32 bytes;
	__u32 pad;
};

/* Start of each in-flight bio of a bio-based disk. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct bh_bio_start);
} bio_start SEC(".maps");

#define BH_RQ_BITS 16
/* Per-request state lives in a direct-mapped array indexed by a hash of the request pointer:
 * our issue stamp and the issuing task, written at block_rq_issue. Requests come from each
 * queue's fixed pool and are reused, so the slots in use are few and hot. An array write is a
 * few stores: no bucket walk, no lock, nothing to delete, and a lost completion leaves nothing
 * behind. The completion reads the slot only where the kernel's own stamps do not serve (a
 * plug's cached clock, or no QUEUE_FLAG_STATS) and for sampled I/Os; the in-flight scan walks
 * it to find requests with the driver. */
#define BH_RQ_BITS 16
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << BH_RQ_BITS);
	__type(key, __u32);
	__type(value, struct bh_rq_slot);
} rq_slots SEC(".maps");

/* What bh_inflight found: the summary, and the in-flight I/Os themselves. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bh_inflight_summary);
} inflight_summary SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BH_INFLIGHT_MAX);
	__type(key, __u32);
	__type(value, struct bh_inflight_io);
} inflight_list SEC(".maps");

/* Per disk: all in-flight I/Os counted and the oldest start, however many are listed. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct bh_inflight_disk);
} inflight_disks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 2 * 1024 * 1024);
} samples SEC(".maps");

/* A ring buffer's records have no type in BTF; this read-only null pointer puts struct
 * bh_sample there, so the agent can check its decoder against the object's own layout. */
struct bh_sample *const volatile bh_sample_btf = 0;

/* dev_t (partitions included) of the disks to trace when filter_disks is set. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} disk_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BH_BUDGET_SLOTS);
	__type(key, __u32);
	__type(value, struct bh_budget);
} budget SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bh_settings);
} settings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bh_counters);
} counters SEC(".maps");

/* The current second, cached per CPU so the hot path divides by 10^9 once a second. */
struct bh_slot_cache {
	__u64 start;  /* monotonic ns where `slot` starts */
	__u64 end;    /* and ends */
	__s64 offset; /* the wall-clock offset it was computed with */
	__u32 slot;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bh_slot_cache);
} slot_cache SEC(".maps");

/* One u64 per CPU to turn pointers into numbers (see ptr_id). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ptr_scratch SEC(".maps");

/* ---- kernel layout, resolved by CO-RE ---- */

/* Before 5.16 a request named its disk directly. */
struct request___rq_disk {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

static __always_inline __u32 op_mask(void)
{
	/* REQ_OP_BITS is a macro; the first flag bit equals it. */
	return (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_FAILFAST_DEV)) - 1;
}

static __always_inline __u32 op_flush(void)
{
	if (bpf_core_enum_value_exists(enum req_op, REQ_OP_FLUSH))
		return bpf_core_enum_value(enum req_op, REQ_OP_FLUSH);
	return 2;
}

static __always_inline bool op_is_passthrough(__u32 op)
{
	if (bpf_core_enum_value_exists(enum req_op, REQ_OP_DRV_IN))
		return op == bpf_core_enum_value(enum req_op, REQ_OP_DRV_IN) ||
		       op == bpf_core_enum_value(enum req_op, REQ_OP_DRV_OUT);
	return false;
}

/* RQF_* became enum rqf_flags bits in 6.9; before that they were macros we cannot see, and
 * the affected logic degrades (issue timestamps from the in-flight map, flush-sequence data
 * requests possibly counted at both completions). */
static __always_inline __u32 rqf_flush_seq(void)
{
	if (bpf_core_enum_value_exists(enum rqf_flags, __RQF_FLUSH_SEQ))
		return 1u << bpf_core_enum_value(enum rqf_flags, __RQF_FLUSH_SEQ);
	return 0;
}

static __always_inline __u32 rqf_stats(void)
{
	if (bpf_core_enum_value_exists(enum rqf_flags, __RQF_STATS))
		return 1u << bpf_core_enum_value(enum rqf_flags, __RQF_STATS);
	return 0;
}

static __always_inline __u32 rqf_io_stat(void)
{
	if (bpf_core_enum_value_exists(enum rqf_flags, __RQF_IO_STAT))
		return 1u << bpf_core_enum_value(enum rqf_flags, __RQF_IO_STAT);
	return 0;
}

#define FLAG_BIT(name) (1u << bpf_core_enum_value(enum req_flag_bits, name))
#define MAYBE_FLAG(cmd, name, cls_bit)                                                   \
	((bpf_core_enum_value_exists(enum req_flag_bits, name) && ((cmd) & FLAG_BIT(name))) \
		 ? (cls_bit)                                                                \
		 : 0)

/* Class code: op plus the flags that name the class (see blkheat.h). */
static __always_inline __u16 cls_of(__u32 cmd)
{
	__u16 cls = cmd & op_mask() & BH_CLS_OP_MASK;
	cls |= MAYBE_FLAG(cmd, __REQ_SYNC, BH_CLS_SYNC);
	cls |= MAYBE_FLAG(cmd, __REQ_META, BH_CLS_META);
	cls |= MAYBE_FLAG(cmd, __REQ_FUA, BH_CLS_FUA);
	cls |= MAYBE_FLAG(cmd, __REQ_PRIO, BH_CLS_PRIO);
	cls |= MAYBE_FLAG(cmd, __REQ_RAHEAD, BH_CLS_RAHEAD);
	cls |= MAYBE_FLAG(cmd, __REQ_BACKGROUND, BH_CLS_BACKGROUND);
	cls |= MAYBE_FLAG(cmd, __REQ_PREFLUSH, BH_CLS_PREFLUSH);
	return cls;
}

/* ---- shared helpers ---- */

/* A pointer as a plain number, for hashing and map keys. The verifier forbids arithmetic on
 * trusted BTF pointers and restores the pointer type when a spill is read back from the
 * stack, but a map value always reads back as a scalar (privileged programs may store
 * pointers there). The per-CPU array lookup is inlined by the verifier: a few instructions. */
static __always_inline __u64 ptr_id(const void *p)
{
	__u32 zero = 0;
	__u64 *slot = bpf_map_lookup_elem(&ptr_scratch, &zero);
	if (!slot)
		return 0;
	*slot = (__u64)p;
	return *(volatile __u64 *)slot;
}

static __always_inline void bump_counter(__u32 offset)
{
	__u32 zero = 0;
	struct bh_counters *c = bpf_map_lookup_elem(&counters, &zero);
	if (c && offset + sizeof(__u64) <= sizeof(*c))
		*(__u64 *)((char *)c + offset) += 1;
}

static __always_inline struct bh_rq_slot *rq_slot_of(__u64 id)
{
	__u32 idx = (__u32)((id * 0x9E3779B97F4A7C15ULL) >> (64 - BH_RQ_BITS));
	return bpf_map_lookup_elem(&rq_slots, &idx);
}

/* Dense bucket of a latency: the smallest k with ns <= bounds_ns[k]. The agent fills every
 * entry past the schema's last bound with U64_MAX, so the answer for a latency above them all
 * is nr_bounds (overflow). Binary search over a fixed 128 entries (7 steps), or 256 for schema 3
 * (8 steps). A global function: the verifier checks it once, on its own, instead of following
 * each of its 2^steps outcomes through the rest of the caller (schema 3's two searches per I/O
 * made bh_rq_complete too complex to verify). Its result is a plain number to the caller, which
 * bounds it again before indexing. */
#define BH_SEARCH_STEP(step)                        \
	if (bounds_ns[pos + (step) - 1] < ns)        \
		pos += (step);
__noinline __u64 bh_bucket_of(__u64 ns)
{
	__u32 pos = 0;
#if BH_MAX_BOUNDS == 256
	BH_SEARCH_STEP(128)
#else
	_Static_assert(BH_MAX_BOUNDS == 128, "search steps assume 128 or 256 bounds");
#endif
	BH_SEARCH_STEP(64)
	BH_SEARCH_STEP(32)
	BH_SEARCH_STEP(16)
	BH_SEARCH_STEP(8)
	BH_SEARCH_STEP(4)
	BH_SEARCH_STEP(2)
	BH_SEARCH_STEP(1)
	return pos < BH_NR_BUCKETS ? pos : BH_NR_BUCKETS - 1;
}

/* One finished I/O, whichever hook saw it. */
struct bh_io {
	__u64 now;
	__s64 device_ns; /* -1 = unknown */
	__s64 queue_ns;  /* -1 = unknown */
	__u64 sector;
	__u64 pid_tgid;                 /* submitter (0 = unknown), bio-based disks */
	__u64 task;
	__u64 rq_id;                    /* request-based disks: the request, whose slot names the submitter */
	__u64 cgroup;                   /* charged cgroup (bh_hist_key.cgroup) */
	__u32 status;                   /* blk_status_t, 0 = success */
	__u32 dev;
	__u32 bytes;
	__u16 cls;
	bool counted; /* false: only note a completion whose start was missed */
};

/* Size class of an I/O: the smallest s with bytes <= 2^s (4 KiB -> 12, 1 MiB -> 20); 0 for none.
 * Floor of log2(bytes - 1), plus one, by halving the width: 5 steps for 32 bits. */
#define BH_LOG2_STEP(bits)      \
	if (v >> (bits)) {      \
		v >>= (bits);   \
		s += (bits);    \
	}
static __always_inline __u8 size_log2(__u32 bytes)
{
	if (!bytes)
		return 0;
	__u32 v = bytes - 1;
	__u8 s = 0;
	BH_LOG2_STEP(16)
	BH_LOG2_STEP(8)
	BH_LOG2_STEP(4)
	BH_LOG2_STEP(2)
	BH_LOG2_STEP(1)
	return s + v;
}

static __always_inline struct bh_hist *hist_for(struct bh_hist_key *key)
{
	struct bh_hist *h = bpf_map_lookup_elem(&hists, key);
	if (h)
		return h;
	__u32 zero = 0;
	struct bh_hist *z = bpf_map_lookup_elem(&zero_hist, &zero);
	if (!z)
		return NULL;
	/* NOEXIST: another CPU may have inserted the key meanwhile; either way look it up. */
	bpf_map_update_elem(&hists, key, z, BPF_NOEXIST);
	return bpf_map_lookup_elem(&hists, key);
}

/* Takes one unit of this second's sample budget (outlier or fair share); false when spent. */
static __always_inline bool take_budget(__u32 slot, bool outlier, struct bh_settings *cfg)
{
	__u32 idx = slot % BH_BUDGET_SLOTS;
	struct bh_budget *b = bpf_map_lookup_elem(&budget, &idx);
	if (!b)
		return false;
	__u64 seen = b->slot;
	if (seen != slot) {
		/* The agent resets entries two seconds ahead; claim a stale one only if it lagged. */
		if (seen > slot || __sync_val_compare_and_swap(&b->slot, seen, slot) != seen)
			return false;
		b->outliers = 0;
		b->fair = 0;
	}
	if (outlier)
		return __sync_fetch_and_add(&b->outliers, 1) < cfg->outlier_budget;
	return __sync_fetch_and_add(&b->fair, 1) < cfg->fair_budget;
}

static __always_inline bool emit_sample(struct bh_io *io, __u32 slot, bool outlier)
{
	struct bh_sample *s = bpf_ringbuf_reserve(&samples, sizeof(*s), 0);
	if (!s) {
		bump_counter(offsetof(struct bh_counters, ring_lost));
		return false;
	}
	s->ts_ns = io->now;
	s->slot = slot;
	s->pad = 0;
	s->sector = io->sector;
	s->device_ns = io->device_ns >= 0 ? io->device_ns : 0;
	s->queue_ns = io->queue_ns >= 0 ? io->queue_ns : 0;
	s->dev = io->dev;
	s->bytes = io->bytes;
	s->cls = io->cls;
	s->flags = (outlier ? BH_SAMPLE_OUTLIER : 0) | (io->queue_ns >= 0 ? BH_SAMPLE_QUEUE_KNOWN : 0);
	s->pid = 0;
	s->cgroup_id = io->cgroup;
	__builtin_memset(s->comm, 0, sizeof(s->comm));

	__u64 pid_tgid = io->pid_tgid, task = io->task;
	if (io->rq_id) {
		struct bh_rq_slot *sl = rq_slot_of(io->rq_id);
		if (sl && sl->key == io->rq_id) {
			pid_tgid = sl->pid_tgid;
			task = sl->task;
		}
	}
	if (pid_tgid) {
		s->pid = pid_tgid >> 32;
		/* Only the submitter's pid and task pointer are stored per I/O (cheap); its comm and
		 * cgroup are read here, for the few sampled I/Os. The task may have exited since:
		 * they are trusted only if the task at that address still has the same tgid. */
		struct task_struct *t = (struct task_struct *)task;
		int tgid = 0;
		if (t && !bpf_probe_read_kernel(&tgid, sizeof(tgid), &t->tgid) && (__u32)tgid == s->pid &&
		    !bpf_probe_read_kernel(s->comm, sizeof(s->comm), &t->comm)) {
			s->flags |= BH_SAMPLE_SUBMITTER_KNOWN;
		} else {
			__builtin_memset(s->comm, 0, sizeof(s->comm));
		}
	}
	bpf_ringbuf_submit(s, BPF_RB_NO_WAKEUP);
	return true;
}

/* Wall-clock second of a monotonic time; the per-CPU cache makes the division rare. */
static __always_inline __u32 slot_of(__u64 now, __s64 offset)
{
	__u32 zero = 0;
	struct bh_slot_cache *c = bpf_map_lookup_elem(&slot_cache, &zero);
	if (c && c->offset == offset && now >= c->start && now < c->end)
		return c->slot;
	__u64 wall = now + offset;
	__u32 slot = (__u32)(wall / slot_ns);
	if (c) {
		c->start = (__u64)slot * slot_ns - offset;
		c->end = c->start + slot_ns;
		c->offset = offset;
		c->slot = slot;
	}
	return slot;
}

static __always_inline void record_io(struct bh_io *io)
{
	/* Other disks are not ours to count (and must not spend the sample budget). */
	if (filter_disks && !bpf_map_lookup_elem(&disk_filter, &io->dev))
		return;
	__u32 zero = 0;
	struct bh_settings *cfg = bpf_map_lookup_elem(&settings, &zero);
	if (!cfg)
		return;
	__u32 slot = slot_of(io->now, cfg->wall_offset_ns);
	struct bh_hist_key key = {
		.slot = slot, .dev = io->dev, .cls = io->cls, .size_log2 = size_log2(io->bytes), .cgroup = io->cgroup
	};
	struct bh_hist *h = hist_for(&key);
	if (!h) {
		bump_counter(offsetof(struct bh_counters, hist_lost));
		return;
	}
	if (!io->counted) {
		h->missed++;
		return;
	}
	h->count++;
	h->bytes += io->bytes;
	if (io->status) {
		__u32 st = io->status < BH_NR_STATUS ? io->status : BH_NR_STATUS - 1;
		h->errors[st]++;
		bump_counter(offsetof(struct bh_counters, errors));
	}
	__u32 b = 0;
	if (io->device_ns >= 0) {
		/* 64 bits throughout: the verifier sees the bound checked on the register that indexes. */
		__u64 bd = bh_bucket_of(io->device_ns);
		barrier_var(bd); /* keep the bound check: clang knows the callee's range, the verifier does not */
		if (bd >= BH_NR_BUCKETS)
			bd = BH_NR_BUCKETS - 1;
		b = bd;
		h->device[bd]++;
	} else {
		h->missed++;
	}
	if (io->queue_ns >= 0) {
		__u64 q = bh_bucket_of(io->queue_ns);
		barrier_var(q);
		h->queue[q < BH_NR_BUCKETS ? q : BH_NR_BUCKETS - 1]++;
	}

	if (!samples_enabled || io->device_ns < 0) {
		h->dropped++;
		return;
	}
	/* The slowest I/Os of each second are always kept: on this CPU, for this disk and class,
	 * any I/O that reaches a higher bucket than seen so far this second. That guarantees a
	 * record in every second's top bucket at a cost of at most one record per bucket. */
	bool outlier = io->device_ns >= 0 && b + 1 > h->max_bucket_plus1;
	if (outlier)
		h->max_bucket_plus1 = b + 1;
	else if (bpf_get_prandom_u32() >= cfg->fair_threshold) {
		h->dropped++;
		return;
	}
	if (!take_budget(slot, outlier, cfg) || !emit_sample(io, slot, outlier))
		h->dropped++;
}

/* ---- the two instantiations of the hook logic ---- */

#define ___bh_direct1(s, a) ((s)->a)
#define ___bh_direct2(s, a, b) ((s)->a->b)
#define ___bh_direct3(s, a, b, c) ((s)->a->b->c)
#define ___bh_direct4(s, a, b, c, d) ((s)->a->b->c->d)
#define ___bh_nth(_1, _2, _3, _4, _5, N, ...) N
#define ___bh_direct(...) ___bh_nth(__VA_ARGS__, ___bh_direct4, ___bh_direct3, ___bh_direct2, ___bh_direct1, _)(__VA_ARGS__)

#define READ(...) ___bh_direct(__VA_ARGS__)
#define H(name) name##_btf
#include "blkheat_handlers.bpf.h"
#undef READ
#undef H

#define READ(...) BPF_CORE_READ(__VA_ARGS__)
#define H(name) name##_raw
#include "blkheat_handlers.bpf.h"
#undef READ
#undef H

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

SEC("raw_tp/block_bio_complete")
int bh_bio_complete_raw(struct bpf_raw_tracepoint_args *ctx)
{
	on_bio_complete_raw((struct request_queue *)ctx->args[0], (struct bio *)ctx->args[1]);
	return 0;
}

/* ---- the in-flight scan, run by the agent once a second (BPF_PROG_TEST_RUN) ---- */

struct scan_ctx {
	__u64 now;
	__u32 found;
	__u32 listed;
};

/* A slot whose request the kernel says is with the driver now (MQ_RQ_IN_FLIGHT) is an I/O in
 * flight; its age comes from our own stamps. A request that completed is idle again (or started
 * a new life, which rewrote the slot), so nothing has to be cleared at completion. */
static long scan_slot(__u32 idx, struct scan_ctx *cx)
{
	struct bh_rq_slot *sl = bpf_map_lookup_elem(&rq_slots, &idx);
	if (!sl)
		return 1;
	__u64 key = sl->key, issue = sl->issue_ns;
	if (!key || !issue || issue > cx->now)
		return 0;
	struct request *rq = (struct request *)key;
	int state = 0;
	if (BPF_CORE_READ_INTO(&state, rq, state) || state != bpf_core_enum_value(enum mq_rq_state, MQ_RQ_IN_FLIGHT))
		return 0;
	cx->found++;
	__u32 cmd = 0, rqf = 0, len = 0;
	__u64 sector = 0, start = 0;
	BPF_CORE_READ_INTO(&rqf, rq, rq_flags);
	BPF_CORE_READ_INTO(&start, rq, start_time_ns);
	__u32 dev = rq_dev_raw(rq, rqf);
	__u64 began = start && start <= issue ? start : issue;
	/* Counted per disk whether or not it is listed: the count and the oldest age stay exact
	 * however many I/Os are in flight. */
	struct bh_inflight_disk *disk = bpf_map_lookup_elem(&inflight_disks, &dev);
	if (!disk) {
		struct bh_inflight_disk none = {};
		bpf_map_update_elem(&inflight_disks, &dev, &none, BPF_NOEXIST);
		disk = bpf_map_lookup_elem(&inflight_disks, &dev);
	}
	if (disk) {
		disk->count++;
		if (!disk->oldest_start_ns || began < disk->oldest_start_ns)
			disk->oldest_start_ns = began;
	}
	__u32 at = cx->listed;
	if (at >= BH_INFLIGHT_MAX)
		return 0;
	struct bh_inflight_io *out = bpf_map_lookup_elem(&inflight_list, &at);
	if (!out)
		return 0;
	BPF_CORE_READ_INTO(&cmd, rq, cmd_flags);
	BPF_CORE_READ_INTO(&len, rq, __data_len);
	BPF_CORE_READ_INTO(&sector, rq, __sector);
	out->start_ns = began;
	out->issue_ns = issue;
	out->sector = sector;
	out->bytes = len;
	out->cls = rq_cls_raw(cmd, rqf);
	out->dev = dev;
	out->pid = 0;
	__builtin_memset(out->comm, 0, sizeof(out->comm));
	__u64 pid_tgid = sl->pid_tgid;
	struct task_struct *t = (struct task_struct *)sl->task;
	int tgid = 0;
	if (pid_tgid && t && !bpf_probe_read_kernel(&tgid, sizeof(tgid), &t->tgid) && (__u32)tgid == (__u32)(pid_tgid >> 32) &&
	    !bpf_probe_read_kernel(out->comm, sizeof(out->comm), &t->comm))
		out->pid = pid_tgid >> 32;
	cx->listed = at + 1;
	return 0;
}

SEC("syscall")
int bh_inflight(void *ctx)
{
	struct scan_ctx cx = { .now = bpf_ktime_get_ns() };
	bpf_loop(1 << BH_RQ_BITS, scan_slot, &cx, 0);
	__u32 zero = 0;
	struct bh_inflight_summary *sum = bpf_map_lookup_elem(&inflight_summary, &zero);
	if (sum) {
		sum->now_ns = cx.now;
		sum->found = cx.found;
		sum->listed = cx.listed;
	}
	return 0;
}
