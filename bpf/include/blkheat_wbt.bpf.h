/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Writeback throttling (wbt), from its own tracepoint (docs/accounting.md, Causes): wbt_timer
 * closes each of wbt's latency windows on a disk. A window in which the disk's reads were over its
 * target (queue/wbt_lat_usec: LAT_EXCEEDED, so wbt scales writes down) or that wbt had already
 * scaled down (scale_step > 0) is one in which wbt held buffered writes below its default depth:
 * those writes wait in rq_qos_wait, between block_bio_queue and block_getrq, as submit wait. No
 * tracepoint marks the bio that waited: the mark is the disk's, per window. A window closed while
 * wbt is off (queue/wbt_lat_usec 0) is no mark: wbt holds nothing then (wbt_off below).
 *
 * The timer runs in softirq: a window closed on top of pid 1's threads is not seen on kernels that
 * run no BPF program there (docs/accounting.md).
 *
 * Include only from blkheat.bpf.c, after blkheat_record.bpf.h.
 */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BH_WBT_DISKS);
	__type(key, __u32);
	__type(value, struct bh_wbt_events);
} wbt_events SEC(".maps");

/* Whether wbt is off on the disk of `bdi`: queue/wbt_lat_usec was set to 0. wbt_set_min_lat()
 * then sets min_lat_nsec 0 (and WBT_STATE_OFF_MANUAL) but leaves wbt's timer armed; with a 0
 * target every window with reads and writes is LAT_EXCEEDED, which scales down and so re-arms the
 * timer (wb_timer_fn): windows keep closing, marked as throttled, while wbt tracks no write and
 * holds none. (wbt_disable_default(), the other way off, stops the timer.) The path: the bdi's
 * owner is its disk's part0 bd_device (add_disk: bdi_set_owner(disk->bdi, ddev)); the disk's
 * queue lists its rq_qos policies, wbt's (RQ_QOS_WBT) embedded in struct rq_wb. Only read when a
 * window would be a mark (a few times a second per disk). A kernel whose BTF lacks struct rq_wb
 * keeps the mark as its window says. */
static __always_inline bool wbt_off(struct backing_dev_info *bdi)
{
	if (!bpf_core_type_exists(struct rq_wb))
		return false;
	struct device *owner = BPF_CORE_READ(bdi, owner);
	if (!owner)
		return false;
	struct block_device *part0 = (void *)owner - bpf_core_field_offset(struct block_device, bd_device);
	struct rq_qos *rqos = BPF_CORE_READ(part0, bd_disk, queue, rq_qos);
	/* The list is sorted by id, wbt's first; at most one entry per rq_qos_id. */
	for (int i = 0; i < 4 && rqos; i++) {
		if (BPF_CORE_READ(rqos, id) == bpf_core_enum_value(enum rq_qos_id, RQ_QOS_WBT)) {
			struct rq_wb *rwb = (void *)rqos - bpf_core_field_offset(struct rq_wb, rqos);
			return BPF_CORE_READ(rwb, min_lat_nsec) == 0;
		}
		rqos = BPF_CORE_READ(rqos, next);
	}
	return false;
}

/* A wbt window of `bdi`'s disk closed with `status` (enum in blk-wbt.c; req_bits.wbt_lat_exceeded
 * from BTF) at scale step `step`: its disk's entry, or the first free one among 8 probes from the
 * dev's hash, claimed once (windows of one disk may close on two CPUs at once). */
static __always_inline void note_wbt_window(struct backing_dev_info *bdi, __u32 status, int step)
{
	__u64 dev = bdi ? BPF_CORE_READ(bdi, owner, devt) : 0;
	if (!dev)
		return;
	__u32 first = hash_index(dev, BH_WBT_BITS);
	bool limited = (step > 0 || (req_bits.wbt_lat_exceeded && status == req_bits.wbt_lat_exceeded)) && !wbt_off(bdi);
	for (__u32 i = 0; i < 8; i++) {
		__u32 idx = (first + i) & (BH_WBT_DISKS - 1);
		struct bh_wbt_events *e = bpf_map_lookup_elem(&wbt_events, &idx);
		if (!e)
			return;
		if (e->dev != dev && !(e->dev == 0 && __sync_val_compare_and_swap(&e->dev, 0, dev) == 0))
			continue;
		if (limited)
			__sync_fetch_and_add(&e->limited, 1);
		return;
	}
}
