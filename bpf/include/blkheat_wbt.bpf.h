/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Writeback throttling (wbt), from its own tracepoint (docs/accounting.md, Causes): wbt_timer
 * closes each of wbt's latency windows on a disk. A window in which the disk's reads were over its
 * target (queue/wbt_lat_usec: LAT_EXCEEDED, so wbt scales writes down) or that wbt had already
 * scaled down (scale_step > 0) is one in which wbt held buffered writes below its default depth:
 * those writes wait in rq_qos_wait, between block_bio_queue and block_getrq, as submit wait. No
 * tracepoint marks the bio that waited: the mark is the disk's, per window.
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

/* A wbt window of disk `dev` closed with `status` (enum in blk-wbt.c; req_bits.wbt_lat_exceeded
 * from BTF) at scale step `step`: its disk's entry, or the first free one among 8 probes from the
 * dev's hash, claimed once (windows of one disk may close on two CPUs at once). */
static __always_inline void note_wbt_window(__u64 dev, __u32 status, int step)
{
	if (!dev)
		return;
	__u32 first = hash_index(dev, BH_WBT_BITS);
	bool limited = step > 0 || (req_bits.wbt_lat_exceeded && status == req_bits.wbt_lat_exceeded);
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
