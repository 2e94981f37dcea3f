// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * blkheat: per-second block I/O latency histograms and sampled per-I/O records.
 *
 * Request-based (blk-mq) disks: device time = issue -> complete, queue time = start -> issue,
 * where start is rq->start_time_ns and issue is rq->io_start_time_ns when the kernel keeps it
 * (QUEUE_FLAG_STATS) or our own issue timestamp otherwise. Bio-based disks (zram, dm, md,
 * bcache): block_bio_queue -> block_bio_complete.
 *
 * Histograms live in a per-CPU hash keyed by (wall-clock second, disk, class): a second is
 * only ever written while it is current, so the agent reads and deletes closed seconds without
 * losing or double counting anything at the boundary (iterate-then-delete of a live map, as
 * biolatency does, loses the I/Os that land between the read and the delete).
 *
 * Exact counts despite the kernel: on 6.18 we measured about 1 in 10^4 completions for which
 * neither block_rq_complete nor block_io_done runs any BPF program (no recursion miss is
 * recorded) while /proc/diskstats counts the I/O. blkheat keeps books per request (issues and
 * requeues on the issue side, delivered completions per CPU on the completion side, so the hot
 * path moves no cache line between CPUs) and per empty flush write (the one request fsync
 * submits that never reaches a driver). The agent runs a sweeper once a second that balances
 * the books against the kernel's own request state and counts what completed unseen.
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
/* Bit number of QUEUE_FLAG_STATS in request_queue.queue_flags (an anonymous enum: the agent
 * resolves it from BTF); >= 64 = unknown, always timestamp issues ourselves. */
const volatile __u32 queue_flag_stats_bit = 64;
/* Ignore rq->io_start_time_ns and always use the in-flight map (tests exercise both paths). */
const volatile bool force_inflight = false;
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
/* Per-request side data lives in direct-mapped arrays indexed by a hash of the request
 * pointer. Requests come from each queue's fixed pool and are reused, so the slots in use are
 * few and hot. An array write is a few stores: no bucket walk, no lock, nothing to delete,
 * and a lost completion leaves nothing behind that could wedge a table. Each array has one
 * kind of writer, so no cache line moves between the submitting and the completing CPU on
 * the way. */

/* Written by block_bio_queue only, read for sampled I/Os: who submitted a bio. 2-way: a new bio
 * takes the older entry of its pair, so a bio in flight loses its entry only if the other way
 * is in flight too (bios come from slabs: many more addresses than requests). */
struct bh_submitter {
	__u64 key; /* struct bio this entry belongs to (ptr_id) */
	__u64 pid_tgid;
	__u64 task;
	__u64 ts;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << BH_RQ_BITS);
	__type(key, __u32);
	__type(value, struct bh_submitter);
} submitters SEC(".maps");

/* Written at issue (and requeue): the issue side of the request's bookkeeping. */
struct bh_issued {
	__u64 key;      /* struct request this slot belongs to (ptr_id) */
	__u64 issue_ns; /* our issue timestamp, only where the kernel keeps none (0 = none) */
	__u32 issued;   /* issues to the driver, ever */
	__u32 requeued; /* requeues, ever (a requeued request is issued again) */
	__u32 shared;   /* two requests mapped to this slot: its counts cannot tell them apart */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << BH_RQ_BITS);
	__type(key, __u32);
	__type(value, struct bh_issued);
} rq_issued SEC(".maps");

/* Completions delivered, per pair of slots (a function of the request pointer alone, so the
 * completing CPU reads nothing the issuing CPU writes) and per CPU (each writes its own). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1 << (BH_RQ_BITS - 1));
	__type(key, __u32);
	__type(value, __u32);
} rq_completed SEC(".maps");

/* The sweeper's own books, per pair of slots: undelivered completions already counted. */
struct bh_swept {
	__u32 accounted;
	__u32 last_issued;
	__u32 idle;       /* at the last sweep the request was idle and the books balanced */
	__u32 idle_sweeps; /* consecutive sweeps with nothing new: the slot is freed after a while */
};

/* A slot idle and balanced this many sweeps (seconds) in a row is given back, so requests of
 * removed disks do not hold slots forever. */
#define BH_EVICT_AFTER 30
/* How far back an undelivered completion is dated (the agent sweeps ~120 ms into a second). */
#define BH_SWEEP_BACKDATE_NS 300000000ULL

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << (BH_RQ_BITS - 1));
	__type(key, __u32);
	__type(value, struct bh_swept);
} rq_swept SEC(".maps");

/* The empty write of a flush sequence (what fsync submits) is completed by the flush machinery
 * without ever reaching the driver, so it has no issue books; it is booked from its bio. */
#define BH_SHELL_BITS 12
#define BH_SHELL_PENDING 1
#define BH_SHELL_DONE 2
#define BH_SHELL_CLAIMED 3
/* A pending empty flush write older than this is counted as completed unseen. It waits for one
 * flush (ms); if a slow flush outlives this, its delivered completion is then skipped (counted
 * once either way, only earlier). Short, so the count lands in the second it belongs to. */
#define BH_SHELL_TIMEOUT_NS 300000000ULL

struct bh_shell {
	__u64 key;       /* its bio (ptr_id) */
	__u64 booked_ns;
	__u64 state;     /* BH_SHELL_*, claimed by compare-and-swap */
	__u32 dev;
	__u16 cls;
	__u16 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << BH_SHELL_BITS);
	__type(key, __u32);
	__type(value, struct bh_shell);
} shells SEC(".maps");

/* Possible CPUs, for the sweeper to sum per-CPU counts (set by the agent). */
const volatile __u32 nr_cpus = 1;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 2 * 1024 * 1024);
} samples SEC(".maps");

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

static __always_inline __u32 rq_slot(__u64 id)
{
	return (__u32)((id * 0x9E3779B97F4A7C15ULL) >> (64 - BH_RQ_BITS));
}

/* The two entries of the submitter table a bio can be booked in (see struct bh_submitter). */
static __always_inline bool submitter_ways(__u64 bio_id, struct bh_submitter **a, struct bh_submitter **b)
{
	__u32 ia = rq_slot(bio_id) & ~1u, ib = ia | 1;
	*a = bpf_map_lookup_elem(&submitters, &ia);
	*b = bpf_map_lookup_elem(&submitters, &ib);
	return *a && *b;
}

static __always_inline struct bh_shell *shell_of(__u64 bio_id)
{
	__u32 idx = (__u32)((bio_id * 0x9E3779B97F4A7C15ULL) >> (64 - BH_SHELL_BITS));
	return bpf_map_lookup_elem(&shells, &idx);
}

/* The pair of issue slots a request's books can be in, and the index of its completion count. */
static __always_inline __u32 rq_pair(__u64 id)
{
	return rq_slot(id) >> 1;
}

/* The issue books of a request: 2-way associative, so two requests hashing to one place
 * both get books of their own. *idx is set to the slot. With `claim`, a request not there yet
 * takes a free slot of the pair (compare-and-swap: two CPUs cannot take the same); if both are
 * taken by others, the first is marked shared and used (its counts then mean nothing). */
static __always_inline struct bh_issued *issued_slot(__u64 id, bool claim, __u32 *idx)
{
	__u32 a = rq_slot(id) & ~1u, b = a | 1;
	struct bh_issued *sa = bpf_map_lookup_elem(&rq_issued, &a);
	struct bh_issued *sb = bpf_map_lookup_elem(&rq_issued, &b);
	if (!sa || !sb)
		return NULL;
	if (sa->key == id) {
		*idx = a;
		return sa;
	}
	if (sb->key == id) {
		*idx = b;
		return sb;
	}
	if (!claim)
		return NULL;
	if (!sa->key && __sync_val_compare_and_swap(&sa->key, 0, id) == 0) {
		*idx = a;
		return sa;
	}
	if (!sb->key && __sync_val_compare_and_swap(&sb->key, 0, id) == 0) {
		*idx = b;
		return sb;
	}
	if (!sa->shared)
		bump_counter(offsetof(struct bh_counters, books_shared));
	sa->shared = 1;
	sa->key = id;
	*idx = a;
	return sa;
}


/* Dense bucket of a latency: the smallest k with ns <= bounds_ns[k]. The agent fills every
 * entry past the schema's last bound with U64_MAX, so the answer for a latency above them all
 * is nr_bounds (overflow). Branch-light binary search over a fixed 128 entries: 7 steps. */
#define BH_SEARCH_STEP(step)                        \
	if (bounds_ns[pos + (step) - 1] < ns)        \
		pos += (step);
static __always_inline __u32 bucket_of(__u64 ns)
{
	__u32 pos = 0;
	_Static_assert(BH_MAX_BOUNDS == 128, "search steps assume 128 bounds");
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
	__u64 submitter_key;            /* first bio of the request, to find its submitter (0 = none) */
	struct bh_bio_start *bio_start; /* bio-based: start record with the submitter */
	__u32 dev;
	__u32 bytes;
	__u16 cls;
	bool counted; /* false: only note a completion whose start was missed */
};

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
	s->cgroup_id = 0;
	__builtin_memset(s->comm, 0, sizeof(s->comm));

	__u64 pid_tgid = 0, task = 0;
	if (io->bio_start) {
		pid_tgid = io->bio_start->pid_tgid;
		task = io->bio_start->task;
	} else if (io->submitter_key) {
		struct bh_submitter *sa, *sb, *sub = NULL;
		if (submitter_ways(io->submitter_key, &sa, &sb))
			sub = sa->key == io->submitter_key ? sa : sb->key == io->submitter_key ? sb : NULL;
		if (sub) {
			pid_tgid = sub->pid_tgid;
			task = sub->task;
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
			if (bpf_core_field_exists(struct task_struct, cgroups))
				s->cgroup_id = BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
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
	struct bh_hist_key key = { .slot = slot, .dev = io->dev, .cls = io->cls };
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
	bump_counter(offsetof(struct bh_counters, counted));
	__u32 b = 0;
	if (io->device_ns >= 0) {
		b = bucket_of(io->device_ns);
		h->device[b]++;
	} else {
		h->missed++;
	}
	if (io->queue_ns >= 0)
		h->queue[bucket_of(io->queue_ns)]++;

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

/* Counts completions of a request whose completion tracepoints never ran. On some kernels
 * (seen on 6.18 under concurrent load, about 1 in 10^4 completions) block_rq_complete and
 * block_io_done are not delivered to any BPF program for a request that /proc/diskstats does
 * count. The sweeper finds them by balancing each request's books: issues - requeues -
 * delivered completions - (1 if in flight now). What is left completed unseen: count it,
 * latency unknown, so counts stay exact. */
static __always_inline void count_unseen_completion(__u32 dev, __u16 cls)
{
	struct bh_io io = {};
	/* The agent sweeps just after each second closes and before it harvests that second; the
	 * completion happened since the previous sweep, most likely in the second that just closed:
	 * count it there, not in the new one. */
	io.now = bpf_ktime_get_ns() - BH_SWEEP_BACKDATE_NS;
	io.dev = dev;
	io.cls = cls;
	io.device_ns = -1;
	io.queue_ns = -1;
	io.counted = true;
	bump_counter(offsetof(struct bh_counters, completion_unseen));
	record_io(&io);
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
	on_rq_complete_btf(rq, nr_bytes);
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
	on_rq_complete_raw((struct request *)ctx->args[0], (unsigned int)ctx->args[2]);
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

/* ---- the sweeper, run by the agent once a second (BPF_PROG_TEST_RUN) ---- */

struct sweep_sum {
	__u32 pair;
	__u32 completed;
};

static long sum_completed(__u32 cpu, struct sweep_sum *sum)
{
	__u32 *c = bpf_map_lookup_percpu_elem(&rq_completed, &sum->pair, cpu);
	if (c)
		sum->completed += *c;
	return 0;
}

static long reset_completed(__u32 cpu, struct sweep_sum *sum)
{
	__u32 *c = bpf_map_lookup_percpu_elem(&rq_completed, &sum->pair, cpu);
	if (c)
		*c = 0;
	return 0;
}

static __always_inline void clear_issued(struct bh_issued *is)
{
	is->key = 0;
	is->issued = 0;
	is->requeued = 0;
	is->shared = 0;
	is->issue_ns = 0;
}

/* 1 if the request of this slot is with the driver now; reads the kernel's own state. */
static __always_inline __u32 in_flight(struct bh_issued *is)
{
	if (!is->key)
		return 0;
	struct request *rq = (struct request *)is->key;
	int state = -1;
	if (BPF_CORE_READ_INTO(&state, rq, state))
		return 1; /* unreadable: assume busy, never a false "lost" */
	return state != bpf_core_enum_value(enum mq_rq_state, MQ_RQ_IDLE);
}

/* Balances one pair of slots: issues - requeues - delivered completions - requests in flight.
 * Reads issues first, then the requests' states, then requeues and completions, so I/O moving
 * meanwhile can only make the balance come out low (never a false "lost"); a low balance is
 * just recomputed at the next sweep.
 * What is left over completed without a completion tracepoint: count it, latency unknown. */
static long sweep_pair(__u32 pair, void *ctx)
{
	__u32 ia = pair << 1, ib = ia | 1;
	struct bh_issued *a = bpf_map_lookup_elem(&rq_issued, &ia);
	struct bh_issued *b = bpf_map_lookup_elem(&rq_issued, &ib);
	struct bh_swept *sw = bpf_map_lookup_elem(&rq_swept, &pair);
	if (!a || !b || !sw)
		return 1;
	if (!a->key && !b->key)
		return 0;
	__u32 issued = a->issued + b->issued;
	if (issued == sw->last_issued && sw->idle) {
		/* Nothing issued since the books last balanced with both requests idle. After a
		 * while, give the pair back, so requests of removed disks do not hold it forever. */
		if (++sw->idle_sweeps >= BH_EVICT_AFTER) {
			clear_issued(a);
			clear_issued(b);
			struct sweep_sum r = { .pair = pair };
			bpf_loop(nr_cpus, reset_completed, &r, 0);
			sw->accounted = 0;
			sw->last_issued = 0;
			sw->idle = 0;
			sw->idle_sweeps = 0;
		}
		return 0;
	}
	sw->idle_sweeps = 0;
	/* The request state before anything that lowers the balance (a requeue or a completion is
	 * booked before the kernel marks the request idle): the balance can only come out low. */
	__u32 busy = in_flight(a) + in_flight(b);
	__u32 requeued = a->requeued + b->requeued;
	struct sweep_sum sum = { .pair = pair };
	bpf_loop(nr_cpus, sum_completed, &sum, 0);
	__s64 unseen = (__s64)issued - requeued - sum.completed - busy - sw->accounted;
	sw->last_issued = issued;
	sw->idle = !busy && unseen <= 0;
	if (unseen <= 0 || a->shared || b->shared)
		return 0; /* a shared slot's counts mix requests: nothing can be concluded */
	if (unseen > 64)
		unseen = 64; /* never more than a handful; a bound for the verifier and for sanity */
	/* Which request of the pair went unseen: the only one booked here, else the one idle now
	 * (the other is in flight). Its fields still name its queue and, unless reused meanwhile,
	 * the op of the life that went unseen. A slot without a key must never be chosen while the
	 * other has one: its NULL request would put the count on no disk ("0:0"). */
	__u64 which = !b->key ? a->key : !a->key ? b->key : !in_flight(a) ? a->key : b->key;
	struct request *rq = (struct request *)which;
	__u32 cmd = 0;
	BPF_CORE_READ_INTO(&cmd, rq, cmd_flags);
	struct gendisk *disk = BPF_CORE_READ(rq, q, disk);
	__u32 dev = disk ? ((__u32)BPF_CORE_READ(disk, major) << 20) | (__u32)BPF_CORE_READ(disk, first_minor) : 0;
	__u16 cls = cls_of(cmd);
	for (int i = 0; i < 64 && i < unseen; i++)
		count_unseen_completion(dev, cls);
	sw->accounted += unseen;
	return 0;
}

/* A pending empty flush write older than its timeout completed unseen: claim and count it. */
static long sweep_shell(__u32 idx, __u64 *now)
{
	struct bh_shell *sh = bpf_map_lookup_elem(&shells, &idx);
	if (!sh)
		return 1;
	if (sh->state != BH_SHELL_PENDING || *now - sh->booked_ns < BH_SHELL_TIMEOUT_NS)
		return 0;
	if (__sync_val_compare_and_swap(&sh->state, BH_SHELL_PENDING, BH_SHELL_CLAIMED) == BH_SHELL_PENDING) {
		bump_counter(offsetof(struct bh_counters, shell_unseen));
		count_unseen_completion(sh->dev, sh->cls);
	}
	return 0;
}

SEC("syscall")
int bh_sweep(void *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	bpf_loop(1 << BH_SHELL_BITS, sweep_shell, &now, 0);
	bpf_loop(1 << (BH_RQ_BITS - 1), sweep_pair, NULL, 0);
	return 0;
}
