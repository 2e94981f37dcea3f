/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The in-flight scan (bh_inflight), run by the agent once a second with BPF_PROG_TEST_RUN: every
 * request the kernel has with a driver now, counted per disk, and the oldest listed.
 *
 * Include only from blkheat.bpf.c, after the hook logic (it reads requests as the raw_tp
 * instantiation does).
 */

struct scan_ctx {
	__u64 now;
	__u32 found;
	__u32 listed;
};

/* The disk's line of inflight_disks, made on first use. */
static __always_inline struct bh_inflight_disk *inflight_disk(__u32 dev)
{
	struct bh_inflight_disk *disk = bpf_map_lookup_elem(&inflight_disks, &dev);
	if (!disk) {
		struct bh_inflight_disk none = {};
		bpf_map_update_elem(&inflight_disks, &dev, &none, BPF_NOEXIST);
		disk = bpf_map_lookup_elem(&inflight_disks, &dev);
	}
	return disk;
}

/* Counts one I/O found in flight (its disk's count and oldest start) and lists it while there is
 * room. `issue`, `pid_tgid` and `task` are what its slot held at its issue (or what was kept of
 * it, below). */
static __always_inline void note_inflight(struct scan_ctx *cx, struct request *rq, __u64 issue, __u64 pid_tgid, __u64 task)
{
	cx->found++;
	__u32 cmd = 0, rqf = 0, len = 0;
	__u64 sector = 0, start = 0;
	BPF_CORE_READ_INTO(&rqf, rq, rq_flags);
	BPF_CORE_READ_INTO(&start, rq, start_time_ns);
	__u32 dev = rq_dev_raw(rq, rqf);
	__u64 began = start && start <= issue ? start : issue;
	/* Counted per disk whether or not it is listed: the count and the oldest age stay exact
	 * however many I/Os are in flight. */
	struct bh_inflight_disk *disk = inflight_disk(dev);
	if (disk) {
		disk->count++;
		if (!disk->oldest_start_ns || began < disk->oldest_start_ns)
			disk->oldest_start_ns = began;
	}
	__u32 at = cx->listed;
	if (at >= BH_INFLIGHT_MAX)
		return;
	struct bh_inflight_io *out = bpf_map_lookup_elem(&inflight_list, &at);
	if (!out)
		return;
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
	/* A syscall program may call kfuncs: by_pid. */
	if (submitter_comm(pid_tgid, task, true, out->comm))
		out->pid = pid_tgid >> 32;
	cx->listed = at + 1;
}

/* The kernel says the request is with the driver now (MQ_RQ_IN_FLIGHT). */
static __always_inline bool with_driver(struct request *rq)
{
	int state = 0;
	return !BPF_CORE_READ_INTO(&state, rq, state) && state == bpf_core_enum_value(enum mq_rq_state, MQ_RQ_IN_FLIGHT);
}

/* The request is still the life that was kept: with the driver, same start, same sector. */
static __always_inline bool same_life(struct request *rq, struct bh_inflight_kept *k)
{
	__u64 start = 0, sector = 0;
	return with_driver(rq) && !BPF_CORE_READ_INTO(&start, rq, start_time_ns) && start == k->start_ns &&
	       !BPF_CORE_READ_INTO(&sector, rq, __sector) && sector == k->sector;
}

/* First pass: the I/Os kept by earlier scans (in flight for BH_INFLIGHT_KEEP_NS or more), found
 * through the request itself, since another request may have taken their slot since. One that
 * completed (or whose request began a new life) is dropped. */
static long scan_kept(struct bpf_map *map, __u64 *key, struct bh_inflight_kept *k, struct scan_ctx *cx)
{
	struct request *rq = (struct request *)*key;
	if (!same_life(rq, k)) {
		bpf_map_delete_elem(map, key);
		return 0;
	}
	note_inflight(cx, rq, k->issue_ns, k->pid_tgid, k->task);
	return 0;
}

/* Second pass: a slot whose request the kernel says is with the driver now (MQ_RQ_IN_FLIGHT) is an
 * I/O in flight; its age comes from our own stamps. A request that completed is idle again (or
 * started a new life, which rewrote the slot), so nothing has to be cleared at completion. One in
 * flight for BH_INFLIGHT_KEEP_NS or more is kept (and counted by the first pass from then on). */
static __noinline int scan_slot(struct bh_rq_slot *sl, struct scan_ctx *cx)
{
	__u64 key = sl->key, issue = sl->issue_ns;
	if (!key || !issue || issue > cx->now)
		return 0;
	struct request *rq = (struct request *)key;
	if (!with_driver(rq))
		return 0;
	__u64 pid_tgid = sl->pid_tgid, task = sl->task;
	if (cx->now - issue >= BH_INFLIGHT_KEEP_NS) {
		if (bpf_map_lookup_elem(&inflight_kept, &key))
			return 0; /* counted by the first pass */
		struct bh_inflight_kept k = { .issue_ns = issue, .pid_tgid = pid_tgid, .task = task };
		BPF_CORE_READ_INTO(&k.start_ns, rq, start_time_ns);
		BPF_CORE_READ_INTO(&k.sector, rq, __sector);
		/* No room: it is still found through its slot while the slot holds it. */
		bpf_map_update_elem(&inflight_kept, &key, &k, BPF_NOEXIST);
	}
	note_inflight(cx, rq, issue, pid_tgid, task);
	return 0;
}

/* Slots per step of the walk. Each bpf_loop step is a call and a return (dear on this machine kind:
 * docs/accounting.md), and nearly every slot is one no request has used: walking 64 in a step
 * took the scan from ~800 to ~370 us (one a second, at 4k randread's ~200k IOPS); what is left is
 * reading the 4 MiB of slots. */
#define BH_SCAN_BATCH 64

static long scan_slots(__u32 batch, struct scan_ctx *cx)
{
	for (__u32 i = 0; i < BH_SCAN_BATCH; i++) {
		__u32 idx = batch * BH_SCAN_BATCH + i;
		struct bh_rq_slot *sl = bpf_map_lookup_elem(&rq_slots, &idx);
		if (!sl)
			return 1;
		if (sl->key)
			scan_slot(sl, cx);
	}
	return 0;
}

/* Third pass: bios still waiting for a request (submitted, no block_getrq or merge since), counted
 * per disk with the oldest submission, and at a disk's first, the tasks asleep for a tag of its
 * queue. A slot is only a lead: the bio is checked to be that bio
 * still, submitted and not ended (the kernel keeps BIO_TRACE_COMPLETION set from block_bio_queue
 * to bio_endio, and a new bio at the address starts with no flags), on the slot's disk; a bio
 * ended without a request (an error, a NOWAIT bio that would block) is no waiter. Each disk
 * with one says whether its queue is frozen now. */
/* Hardware queues whose tags are looked at: a single-level xarray node holds 64 entries. */
#define BH_TAG_HCTX_MAX 16

/* The tasks asleep for a tag of hardware queue `hctx` (its scheduler's tags when `sched`):
 * blk_mq_get_tag() puts each on the tag sbitmap's wait queues, counted in ws_active, from its
 * sbitmap_prepare_to_wait() to its sbitmap_finish_wait(). */
static __always_inline __u32 hctx_tag_sleepers(struct blk_mq_hw_ctx *hctx, bool sched)
{
	struct blk_mq_tags *tags = NULL;
	int active = 0;
	if (sched)
		BPF_CORE_READ_INTO(&tags, hctx, sched_tags);
	else
		BPF_CORE_READ_INTO(&tags, hctx, tags);
	if (!tags || BPF_CORE_READ_INTO(&active, tags, bitmap_tags.ws_active.counter) || active < 0)
		return 0;
	return active;
}

/* The tasks asleep for a tag of queue `queue` (a struct request_queue *) now, over its first
 * BH_TAG_HCTX_MAX hardware queues (q->hctx_table: one entry is held in the xarray's head itself,
 * more in a node of 64 slots; a deeper tree is not walked, and gives 0: the mark is missed, never
 * made up). A global function: the verifier checks it once, not at each of the scan's calls. */
__noinline __u32 bh_tag_sleepers(__u64 queue)
{
	struct request_queue *q = (struct request_queue *)queue;
	void *head = NULL, *elevator = NULL;
	if (!q || BPF_CORE_READ_INTO(&head, q, hctx_table.xa_head) || !head)
		return 0;
	BPF_CORE_READ_INTO(&elevator, q, elevator);
	bool sched = elevator != NULL;
	__u64 entry = (__u64)head;
	/* xa_is_node(): an internal entry (low bits 10) above 4096 is a node. */
	if ((entry & 3) != 2 || entry <= 4096)
		return hctx_tag_sleepers((struct blk_mq_hw_ctx *)head, sched);
	struct xa_node *node = (struct xa_node *)(entry - 2);
	unsigned char shift = 0;
	if (BPF_CORE_READ_INTO(&shift, node, shift) || shift != 0)
		return 0;
	__u32 sum = 0;
	for (int i = 0; i < BH_TAG_HCTX_MAX; i++) {
		void *slot = NULL;
		if (BPF_CORE_READ_INTO(&slot, node, slots[i]) || !slot)
			continue;
		sum += hctx_tag_sleepers((struct blk_mq_hw_ctx *)slot, sched);
	}
	return sum;
}

static __noinline int scan_waiter(struct bh_bio_slot *sl, struct scan_ctx *cx)
{
	__u64 key = sl->key, submit = sl->submit_ns;
	__u32 dev = sl->dev;
	if (!key || !submit || submit > cx->now || sl->request)
		return 0;
	struct bio *bio = (struct bio *)key;
	if (req_bits.bio_in_flight) {
		__u32 flags = 0;
		if (BPF_CORE_READ_INTO(&flags, bio, bi_flags) || !(flags & req_bits.bio_in_flight))
			return 0;
	}
	struct block_device *bdev = NULL;
	__u32 bd_dev = 0;
	if (BPF_CORE_READ_INTO(&bdev, bio, bi_bdev) || !bdev || BPF_CORE_READ_INTO(&bd_dev, bdev, bd_dev) || bd_dev != dev)
		return 0;
	int depth = 0;
	struct request_queue *q = NULL;
	BPF_CORE_READ_INTO(&q, bdev, bd_disk, queue);
	if (q)
		BPF_CORE_READ_INTO(&depth, q, mq_freeze_depth);
	struct bh_inflight_disk *disk = inflight_disk(dev);
	if (!disk)
		return 0;
	/* The disk's first waiter: are tasks asleep for a tag of its queue? */
	if (!disk->waiting)
		disk->tag_sleepers = bh_tag_sleepers((__u64)q);
	disk->waiting++;
	if (!disk->oldest_submit_ns || submit < disk->oldest_submit_ns)
		disk->oldest_submit_ns = submit;
	if (depth > 0)
		disk->frozen = 1;
	return 0;
}

static long scan_bio_slots(__u32 batch, struct scan_ctx *cx)
{
	for (__u32 i = 0; i < BH_SCAN_BATCH; i++) {
		__u32 idx = batch * BH_SCAN_BATCH + i;
		struct bh_bio_slot *sl = bpf_map_lookup_elem(&bio_slots, &idx);
		if (!sl)
			return 1;
		if (sl->key && !sl->request)
			scan_waiter(sl, cx);
	}
	return 0;
}

SEC("syscall")
int bh_inflight(void *ctx)
{
	struct scan_ctx cx = { .now = bpf_ktime_get_ns() };
	bpf_for_each_map_elem(&inflight_kept, scan_kept, &cx, 0);
	bpf_loop((1 << BH_RQ_BITS) / BH_SCAN_BATCH, scan_slots, &cx, 0);
	if (submit_phase)
		bpf_loop((1 << BH_BIO_BITS) / BH_SCAN_BATCH, scan_bio_slots, &cx, 0);
	__u32 zero = 0;
	struct bh_inflight_summary *sum = bpf_map_lookup_elem(&inflight_summary, &zero);
	if (sum) {
		sum->now_ns = cx.now;
		sum->found = cx.found;
		sum->listed = cx.listed;
	}
	return 0;
}
