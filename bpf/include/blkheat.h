/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The records and values shared by the kernel programs (blkheat.bpf.c) and the agent: this
 * header is their one source. The agent reads none of it by hand: it takes every record's field
 * offsets and sizes, the array lengths and the values below from the built object's BTF when it
 * loads it (apps/agent/src/collector/abi), and refuses an object whose records lack a field it
 * reads, or lay one out at a width it cannot read, naming the struct and the field.
 *
 * So values the agent needs are enums, not #defines: BTF describes enums (through the record
 * struct bh_btf_enums below), never macros. Array lengths need neither: BTF gives each array's size.
 */
#ifndef BLKHEAT_H
#define BLKHEAT_H

/* The latency bucket schema this object is built for (Prometheus native-histogram scale):
 * 2 = 4 buckets per power of two (blkheat.bpf.o, the default), 3 = 8 buckets per power of two
 * (blkheat_s3.bpf.o, built from the same source with -DBH_SCHEMA=3). Both
 * cover 2^-20 s .. 2^6 s: 106 dense buckets at scale 2, 210 at scale 3. */
#ifndef BH_SCHEMA
#define BH_SCHEMA 2
#endif
#if BH_SCHEMA == 3
/* Dense latency buckets per histogram (>= the schema's bucket count; unused tail stays 0). */
#define BH_NR_BUCKETS 216
/* Most bucket upper bounds the agent may hand the program (schema bounds; overflow has none). */
#define BH_MAX_BOUNDS 256
#elif BH_SCHEMA == 2
#define BH_NR_BUCKETS 112
#define BH_MAX_BOUNDS 128
#else
#error "BH_SCHEMA must be 2 or 3"
#endif
#define BH_COMM_LEN 16

/* Class code: low 8 bits = kernel req_op value, then one bit per flag shown in the class name. */
enum bh_cls_bits {
	BH_CLS_OP_MASK = 0xff,
	BH_CLS_SYNC = 1 << 8,
	BH_CLS_META = 1 << 9,
	BH_CLS_FUA = 1 << 10,
	BH_CLS_PRIO = 1 << 11,
	BH_CLS_RAHEAD = 1 << 12,
	BH_CLS_BACKGROUND = 1 << 13,
	BH_CLS_PREFLUSH = 1 << 14,
	/* Not in /proc/diskstats: passthrough commands (REQ_OP_DRV_IN/OUT: SG_IO, NVMe admin,
	 * virtio GET_ID) and requests the kernel does not account (iostats off). Kept apart from
	 * the totals that equal diskstats. */
	BH_CLS_NOSTAT = 1 << 15,
};

/* The kernel's request op and flag values the programs test, read from its BTF by the agent and
 * set before load (knob req_bits; request-bits.ts). Why not CO-RE enum relocations: each is a
 * 64-bit constant the JIT must load, zero-extend and shift into a mask on every I/O (about 150
 * instructions of the completion program, all told), where a frozen knob is one load and the
 * class flags one table lookup. */
struct bh_request_bits {
	__u32 op_mask;       /* REQ_OP_MASK: (1 << __REQ_FAILFAST_DEV) - 1 */
	__u32 op_flush;      /* REQ_OP_FLUSH */
	__u32 op_drv_in;     /* REQ_OP_DRV_IN, or BH_NO_OP on kernels without it */
	__u32 op_drv_out;    /* REQ_OP_DRV_OUT, or BH_NO_OP */
	__u32 rqf_flush_seq; /* 1 << __RQF_FLUSH_SEQ; 0 before 6.9, where RQF_* were macros BTF cannot show */
	__u32 rqf_stats;     /* 1 << __RQF_STATS, or 0 */
	__u32 rqf_io_stat;   /* 1 << __RQF_IO_STAT, or 0 */
	__u32 cls_shift;     /* the lowest flag bit a class names: cmd_flags >> cls_shift indexes cls_flag_table */
	__u32 bio_in_flight; /* 1 << BIO_TRACE_COMPLETION: set on a bio from block_bio_queue to its end; 0 if unknown */
	__u32 sts_again;     /* BLK_STS_AGAIN: a REQ_NOWAIT bio that would have waited (for a tag, or a frozen queue) */
	__u32 wbt_lat_exceeded; /* blk-wbt.c's LAT_EXCEEDED (wbt_timer's status: reads over target), or 0 if unnamed */
};
/* An op value no request has: op_drv_in/op_drv_out on kernels without them. */
enum bh_no_op { BH_NO_OP = 0xffffffffu };
/* cls_flag_table[i]: the class flag bits (BH_CLS_SYNC, ...) of the request flags i << cls_shift. */
#define BH_CLS_FLAG_TABLE_BITS 12

/* blk_status_t values counted per histogram (status >= BH_NR_STATUS goes in the last one); the
 * agent reads it as the length of bh_hist.errors. */
#define BH_NR_STATUS 20

/* Histogram key: one (time slot, disk, class, I/O size, cgroup). Slot = wall-clock second
 * number. The size and cgroup in the key make each entry's latency histogram the size x latency
 * and cgroup x latency joints, at no cost per I/O beyond reading them: one map lookup either way. */
struct bh_hist_key {
	__u32 slot;
	__u32 dev; /* kernel dev_t: major << 20 | minor */
	__u16 cls;
	__u8 size_log2; /* smallest s with bytes <= 2^s; 0 = no data (flushes). */
	__u8 pad;
	__u32 pad2;
	/* The cgroup the I/O is charged to: the kernfs id of the bio's blkcg cgroup (blkio v1 or
	 * cgroup2 io, whichever hierarchy holds the controller), so writeback is charged to whoever
	 * dirtied the pages; 0 = none (no bio, e.g. flushes; no blk-cgroup). */
	__u64 cgroup;
};

/* The histogram table (maps hists, hist_keys, hist_claims): one partition of BH_HIST_PER_CPU
 * entries per possible CPU, each CPU probing at most BH_HIST_PROBES entries of its own from the
 * key's hash. A claim is 0 (free), BH_CLAIM_BUSY (a program is writing the key) or the slot of the
 * key it holds. */
#define BH_HIST_CPU_BITS 12
#define BH_HIST_PER_CPU (1u << BH_HIST_CPU_BITS)
#define BH_HIST_PROBES 32
enum bh_claim { BH_CLAIM_FREE = 0, BH_CLAIM_BUSY = 1 };

/* Histogram value (one per entry, written only on its partition's CPU; the agent adds up the
 * entries of one key). */
struct bh_hist {
	__u64 count;   /* completed I/Os (what /proc/diskstats counts, unless cls has BH_CLS_NOSTAT) */
	__u64 dropped; /* I/Os without a sample record (not sampled, over budget, ring full) */
	__u64 missed;  /* completions whose start was not seen (no latency known) */
	__u64 requeues; /* requests of this disk and class sent back to the queue */
	__u64 bytes;    /* bytes of the counted I/Os: throughput, exact */
	__u32 max_bucket_plus1; /* highest device bucket seen on this CPU this slot, + 1 (0 = none) */
	__u32 pad;
	__u64 submit_unknown; /* request-based I/Os counted whose bio's submission was not seen (no submit, no total) */
	__u64 frozen;         /* I/Os whose bio found its queue frozen when submitted */
	__u64 refused;        /* I/Os first submitted REQ_NOWAIT and turned away (BLK_STS_AGAIN) before a request, then resubmitted */
	__u64 errors[BH_NR_STATUS]; /* failed I/Os (counted in `count` too) by blk_status_t */
	__u64 device[BH_NR_BUCKETS];
	__u64 queue[BH_NR_BUCKETS];
	__u64 submit[BH_NR_BUCKETS]; /* submit wait: the bio's submission -> its request's allocation */
	__u64 total[BH_NR_BUCKETS];  /* the bio's submission -> the request's completion */
};

/* Sample record flags (bh_sample.flags). */
enum bh_sample_flags {
	BH_SAMPLE_OUTLIER = 1 << 0, /* kept as a slowest-of-second I/O, not by random sampling */
	BH_SAMPLE_QUEUE_KNOWN = 1 << 1,
	BH_SAMPLE_SUBMITTER_KNOWN = 1 << 2,
	BH_SAMPLE_SUBMIT_KNOWN = 1 << 3, /* submit_ns holds the submit wait */
};

/* One sampled I/O, pushed through the ring buffer. */
struct bh_sample {
	__u64 ts_ns;     /* completion, CLOCK_MONOTONIC ns */
	__u64 sector;
	__u64 queue_ns;
	__u64 device_ns;
	__u64 cgroup_id; /* the charged cgroup (bh_hist_key.cgroup) */
	__u32 dev;
	__u32 bytes;
	__u32 pid;       /* submitter's tgid */
	__u16 cls;
	__u16 flags;
	char comm[BH_COMM_LEN];
	__u32 slot;      /* the second whose histogram counted this I/O */
	__u32 pad;
	__u64 submit_ns; /* submit wait (BH_SAMPLE_SUBMIT_KNOWN) */
};

/* Per-second sample budget accounting; indexed by slot % BH_BUDGET_SLOTS. */
#define BH_BUDGET_SLOTS 4
struct bh_budget {
	__u64 slot;
	__u64 outliers;
	__u64 fair;
};

/* Global counters (per CPU array, one entry). */
struct bh_counters {
	__u64 requeues;
	__u64 ring_lost;       /* sample records lost: ring buffer full */
	__u64 bio_start_full;  /* bio starts not stored: bio start map full */
	__u64 kernel_times;    /* completions timed from the kernel's own request timestamps (our slot was taken) */
	__u64 partial;         /* partial completions seen (not counted as I/Os) */
	__u64 bio_unknown_dev; /* bio completions with no disk */
	__u64 hist_lost;       /* I/Os not counted: no histogram entry could be created */
	__u64 flush_seq_data;  /* first completions of flush-sequence data requests (counted at the end) */
	__u64 errors;          /* completions with a non-zero status */
	__u64 slot_taken;      /* a request's timing slot was taken by another request before it completed */
	__u64 counted;         /* I/Os counted into a histogram since load: the agent checks its harvest against it */
	__u64 disk_counts_full; /* counted I/Os of a disk that found no entry in disk_counts */
	__u64 refusals_kept;    /* REQ_NOWAIT bios turned away whose first submission was kept (refusals) */
	__u64 refusals_linked;  /* resubmissions that took a kept first submission */
	__u64 refusals_overwritten; /* kept submissions of other I/Os overwritten within BH_REFUSAL_WINDOW_NS, before
				     * their resubmission came (their wait is then timed from the resubmission) */
};

/* Running counts of the I/Os each disk (or partition) put into a histogram since load, per
 * /proc/diskstats op group: what the agent compares with diskstats to measure untimed I/Os. One
 * map read gives every disk's count at once, so the agent reads it right after /proc/diskstats,
 * at nearly the same instant. Per CPU, open addressing by dev_t over BH_DISK_SLOTS entries
 * (BH_DISK_PROBES tries; a disk that finds none is counted in disk_counts_full). */
#define BH_DISK_SLOT_BITS 9
#define BH_DISK_SLOTS (1 << BH_DISK_SLOT_BITS)
#define BH_DISK_PROBES 8
/* Groups, in the agent's OP_GROUPS order: read, write, discard, flush. */
#define BH_NR_GROUPS 4
struct bh_disk_count {
	__u32 dev;  /* dev_t of the entry's disk, valid when used */
	__u32 used; /* 1 once a disk took the entry */
	__u64 n[BH_NR_GROUPS];
};
struct bh_disk_counts {
	struct bh_disk_count e[BH_DISK_SLOTS];
};

/* Per-request state, direct-mapped by request pointer (see rq_slots in blkheat_maps.bpf.h). One cache line. */
struct bh_rq_slot {
	__u64 key;      /* struct request (ptr_id); 0 = free */
	__u64 issue_ns; /* our clock at the latest block_rq_issue of this request */
	__u64 pid_tgid; /* the task that issued it (the submitter, for direct and plugged dispatch) */
	__u64 task;     /* its address from raw_tp programs; 0 from tp_btf ones (see submitter_comm) */
	__u64 pad[4];
};

/* Per-bio state of request-based disks, direct-mapped by bio pointer (map bio_slots): when the bio
 * was submitted and whether it has a request yet. Written at block_bio_queue on the submitting CPU,
 * marked at block_getrq (the same task, no clock read: the request's start_time_ns says when) and
 * read at the request's completion; the in-flight scan finds the bios still waiting for a request
 * here. One slot per cache line (like bh_rq_slot): two slots to a line made the completing CPU's
 * read of one wait for the submitting CPU's writes to its neighbour. */
struct bh_bio_slot {
	__u64 key;        /* struct bio (ptr_id); 0 = free */
	__u64 submit_ns;  /* our clock at block_bio_queue (a split-off bio: its parent's) */
	__u64 request;    /* enum bh_bio_state; 0 = waiting for a request */
	__u32 dev;        /* the bio's bi_bdev->bd_dev (its partition, like a request's) */
	__u32 flags;      /* enum bh_bio_flags */
	__u64 pad[4];
};
enum bh_bio_flags {
	BH_BIO_FROZEN = 1 << 0,  /* its queue was frozen when it was submitted: bio_queue_enter waits */
	BH_BIO_REFUSED = 1 << 1, /* an earlier REQ_NOWAIT submission of the same I/O was turned away */
};

/* Per disk, what writeback throttling (wbt) did, counted since load (map wbt_events, one entry per
 * disk, claimed at its first event and never freed; the agent takes differences). wbt_timer closes
 * each of wbt's latency windows, while the disk has I/O. */
#define BH_WBT_BITS 6
#define BH_WBT_DISKS (1 << BH_WBT_BITS)
struct bh_wbt_events {
	__u64 dev;     /* the disk (bdi->owner->devt); 0 = free (64 bits: claimed by a 64-bit compare-and-swap) */
	__u64 limited; /* windows in which wbt held writes below its default depth: reads over queue/wbt_lat_usec
			* (LAT_EXCEEDED, it scales down) or already scaled down (scale_step > 0) */
};

/* A REQ_NOWAIT bio turned away before it had a request (BLK_STS_AGAIN: no free tag, or a frozen
 * queue), kept (map refusals, direct-mapped by disk and sector) until the same I/O is submitted
 * again: io_uring resubmits it from a worker, as a new bio, and its submit wait starts at the first
 * submission. */
struct bh_refusal {
	__u64 submit_ns; /* the first submission (0 = free, or taken by the resubmission) */
	__u64 sector;
	__u32 dev;
	__u32 bytes;
	__u32 flags;     /* enum bh_bio_flags of the refused bio */
	__u32 pad;
};
/* A resubmission is looked for only this long after the latest refusal. */
#define BH_REFUSAL_WINDOW_NS 1000000000ull
/* bh_bio_slot.request: what became of a bio submitted (0: it is waiting for a request). */
enum bh_bio_state {
	BH_BIO_MERGED = 1,    /* merged into a request that already existed (no wait of its own) */
	BH_BIO_ALLOCATED = 2, /* it has its request (block_getrq), whose start_time_ns is when */
};

/* One I/O found in flight by bh_inflight, oldest first. */
#define BH_INFLIGHT_MAX 256
struct bh_inflight_io {
	__u64 start_ns; /* the request's start (rq->start_time_ns), or its issue when it has none */
	__u64 issue_ns; /* our clock at its issue to the driver */
	__u64 sector;
	__u32 dev;
	__u32 bytes;
	__u32 pid;
	__u16 cls;
	__u16 pad;
	char comm[BH_COMM_LEN];
};

/* What the in-flight scan keeps of an I/O in flight for BH_INFLIGHT_KEEP_NS or more (map
 * inflight_kept, keyed by request), so that it is still found once another request takes its
 * slot: what the slot held, and the start and sector that tell this life of the request from
 * the next. */
#define BH_INFLIGHT_KEEP_NS 100000000ull
#define BH_INFLIGHT_KEPT_MAX 4096
struct bh_inflight_kept {
	__u64 start_ns; /* rq->start_time_ns */
	__u64 sector;
	__u64 issue_ns;
	__u64 pid_tgid;
	__u64 task;
};

/* Per disk (dev_t key of map inflight_disks): every in-flight I/O counted, listed or not, and the
 * start of the oldest. The agent empties the map before each scan. */
struct bh_inflight_disk {
	__u64 count;
	__u64 oldest_start_ns;
	__u64 waiting;          /* bios submitted and still waiting for a request (bio_slots) */
	__u64 oldest_submit_ns; /* the oldest waiting bio's submission (0 = none) */
	__u32 frozen;           /* 1: a waiting bio's queue is frozen now */
	__u32 tag_sleepers;     /* tasks asleep for a tag of the disk's queue now (blk_mq_get_tag; the
				 * scheduler's tags when it has one), read where bios wait */
};

/* Result header of bh_inflight (array map entry 0 of inflight_summary). */
struct bh_inflight_summary {
	__u64 now_ns;  /* our clock when the scan started */
	__u32 found;   /* in-flight I/Os found (may exceed BH_INFLIGHT_MAX: only the first are listed) */
	__u32 listed;  /* entries written to inflight_list */
};

/* Runtime settings the agent updates while running (array map, one entry). */
struct bh_settings {
	__s64 wall_offset_ns;   /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	__u32 fair_threshold;   /* sample an I/O when a uniform u32 draw < this (0 = none, 0xffffffff = all) */
	__u32 fair_budget;      /* random samples allowed per second */
	__u32 outlier_budget;   /* slowest-of-second samples allowed per second */
	__u32 pad;
};

/* BTF carries an enum only where a declaration uses it: this record is that use. blkheat.bpf.c
 * declares one (bh_btf_enums_anchor), which no program reads; the agent reads the enums' values
 * from the object's BTF. */
struct bh_btf_enums {
	enum bh_cls_bits cls_bits;
	enum bh_sample_flags sample_flags;
	enum bh_claim claim;
	enum bh_no_op no_op;
};

#endif /* BLKHEAT_H */
