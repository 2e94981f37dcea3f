/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * blkheat's maps: the per-second histograms, the per-request slots, what the in-flight scan
 * found, the sample ring and budget, settings and counters. Layouts of their keys and values
 * are in blkheat.h, shared with the agent.
 *
 * Include only from blkheat.bpf.c, after the knobs.
 */

/* The per-second histograms: one partition of BH_HIST_PER_CPU entries per CPU (the agent sets
 * max_entries to possible CPUs x BH_HIST_PER_CPU), probed inline from a hash of the key. Why not
 * a per-CPU hash: its lookup is two calls (__htab_map_lookup_elem, then memcmp on the key), ~55 ns
 * per I/O on a machine with retpolines and Safe RET; array lookups are inlined by the verifier and
 * the key compare is a few loads. Entry i is three arrays at index i:
 *  - hist_claims: 0 = free, BH_CLAIM_BUSY while a program writes the key, else the key's slot
 *    (published last, so a matching slot means the key is complete);
 *  - hist_keys: the key;
 *  - hists: the value, written only by programs on the partition's CPU.
 * A second is only written while it is current; the agent reads a closed second's entries, zeroes
 * the value and only then frees the claim. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BH_HIST_PER_CPU);
	__type(key, __u32);
	__type(value, struct bh_hist);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BH_HIST_PER_CPU);
	__type(key, __u32);
	__type(value, struct bh_hist_key);
} hist_keys SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BH_HIST_PER_CPU);
	__type(key, __u32);
	__type(value, __u64); /* 64-bit: BPF's compare-and-swap before ISA v3 */
} hist_claims SEC(".maps");

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

/* BH_SLOT_ALIGNED: the slot arrays below are written on one CPU and read on another (issue and
 * completion, submission and completion), so each slot is one 64-byte cache line of its own.
 * A plain array's values start right after struct bpf_array (312 bytes into it on 6.18, so
 * 56 bytes into a line): every 64-byte slot would straddle two lines, one of them shared with
 * its neighbour. BPF_F_MMAPABLE makes the kernel start the values on a page boundary
 * (array_map_alloc); nothing maps them. */

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
	/* Page-aligned values (BH_SLOT_ALIGNED), so that a 64-byte slot is one cache line. */
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1 << BH_RQ_BITS);
	__type(key, __u32);
	__type(value, struct bh_rq_slot);
} rq_slots SEC(".maps");

/* Per-bio state of request-based disks (struct bh_bio_slot), direct-mapped like rq_slots, by a
 * hash of the bio pointer: a bio in flight owns its address, so a slot whose key is the bio is that
 * bio's. Another bio hashing to the same slot while it waits takes it: that I/O's submission is then
 * counted as not seen (bh_hist.submit_unknown), never taken from the other bio. */
#define BH_BIO_BITS 16
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE); /* one slot per cache line, as rq_slots */
	__uint(max_entries, 1 << BH_BIO_BITS);
	__type(key, __u32);
	__type(value, struct bh_bio_slot);
} bio_slots SEC(".maps");

/* Refused REQ_NOWAIT bios awaiting their resubmission (struct bh_refusal), by disk and sector. */
#define BH_REFUSAL_BITS 13
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << BH_REFUSAL_BITS);
	__type(key, __u32);
	__type(value, struct bh_refusal);
} refusals SEC(".maps");

/* Our clock at the latest refusal: block_bio_queue looks for a resubmission only within
 * BH_REFUSAL_WINDOW_NS of it, so that without refusals no bio pays the lookup. */
__u64 last_refusal_ns = 0;

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

/* I/Os the in-flight scan found in flight for BH_INFLIGHT_KEEP_NS or more, by request: their
 * slot may be taken by another request while they are still stuck, and then only this finds
 * them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BH_INFLIGHT_KEPT_MAX);
	__type(key, __u64);
	__type(value, struct bh_inflight_kept);
} inflight_kept SEC(".maps");

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

/* Each disk's running count by op group (see struct bh_disk_counts). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bh_disk_counts);
} disk_counts SEC(".maps");

/* The current second, cached per CPU so the hot path divides by 10^9 once a second (slot_of). */
struct bh_slot_cache {
	__u64 start;  /* monotonic ns where `slot` starts */
	__u64 end;    /* and ends */
	__s64 offset; /* the wall-clock offset it was computed with */
	__u32 slot;
	__u32 pad;
};

/* Per CPU: the hot path's private state, in one map so that a completion looks it up once and
 * hands it on (cpu_scratch). No other program or the agent reads it. */
struct bh_cpu_scratch {
	__u64 ptr; /* a word to turn pointers into numbers (ptr_id) */
	__u64 rng; /* the fair-sampling draw's state (fair_draw) */
	struct bh_slot_cache second;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bh_cpu_scratch);
} cpu_scratch_map SEC(".maps");
