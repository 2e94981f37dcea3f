/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * blkheat's hook logic, written once and instantiated twice by blkheat.bpf.c:
 *  - with READ = direct loads through BTF pointers (tp_btf: typed arguments, no helper call
 *    per field, CO-RE relocated through vmlinux.h's preserve_access_index),
 *  - with READ = BPF_CORE_READ (raw_tp fallback: untyped arguments, bpf_probe_read_kernel).
 * H(name) gives each instantiation its own function names.
 *
 * Include only from blkheat.bpf.c, after the maps, knobs and shared helpers.
 */

/* Disk dev_t of a request: the partition when the kernel accounted the request to one,
 * otherwise the whole disk (flush requests of a flush sequence carry no partition). */
static __always_inline __u32 H(rq_dev)(struct request *rq, __u32 rqf)
{
	if (rqf & rqf_io_stat()) {
		struct block_device *part = READ(rq, part);
		if (part)
			return READ(part, bd_dev);
	}
	struct gendisk *disk;
	if (bpf_core_field_exists(struct request_queue, disk)) {
		disk = READ(rq, q, disk);
	} else {
		struct request___rq_disk *old = (void *)rq;
		disk = READ(old, rq_disk);
	}
	if (!disk)
		return 0;
	return ((__u32)READ(disk, major) << 20) | (__u32)READ(disk, first_minor);
}

/* block_io_start: the submitting task, captured where it submits (the request is built from
 * its bio in its context); read back only for sampled I/Os. Attached only with samples on. */
static __always_inline void H(on_io_start)(struct request *rq)
{
	__u64 id = ptr_id(rq);
	struct bh_rqinfo *ri = rqinfo_of(id);
	if (!ri)
		return;
	ri->key = id;
	ri->pid_tgid = bpf_get_current_pid_tgid();
	ri->task = bpf_get_current_task();
	ri->issue_ns = 0;
}

/* block_rq_issue: only where the kernel will not timestamp the issue itself. With
 * QUEUE_FLAG_STATS set (wbt, iolatency, ... — the common case), blk_mq_start_request() writes
 * rq->io_start_time_ns right after this tracepoint, so there is nothing to store. */
static __always_inline void H(on_rq_issue)(struct request *rq)
{
	if (!force_inflight && queue_flag_stats_bit < 64) {
		unsigned long qflags = READ(rq, q, queue_flags);
		__u32 op = READ(rq, cmd_flags) & op_mask();
		/* Passthrough and flush requests get no kernel issue timestamp even there. */
		if (((qflags >> queue_flag_stats_bit) & 1) && !op_is_passthrough(op) && op != op_flush())
			return;
	}
	__u64 id = ptr_id(rq);
	struct bh_rqinfo *ri = rqinfo_of(id);
	if (!ri)
		return;
	if (ri->key != id) {
		/* No block_io_start for it (older kernel, samples off) or a colliding request. */
		ri->key = id;
		ri->pid_tgid = 0;
		ri->task = 0;
	}
	ri->issue_ns = bpf_ktime_get_ns();
}

/* block_rq_complete: the I/O is done when this completion covers every remaining byte. */
static __always_inline void H(on_rq_complete)(struct request *rq, unsigned int nr_bytes)
{
	__u32 data_len = READ(rq, __data_len);
	if (nr_bytes < data_len) {
		bump_counter(offsetof(struct bh_counters, partial));
		return;
	}
	__u32 cmd = READ(rq, cmd_flags);
	__u32 rqf = READ(rq, rq_flags);
	__u32 op = cmd & op_mask();
	/* The data request of a flush sequence completes twice: once from the driver (still
	 * marked RQF_FLUSH_SEQ) and once when the sequence ends. Count it at the end, like
	 * /proc/diskstats does; the flush request itself (REQ_OP_FLUSH) counts as a flush. */
	if ((rqf & rqf_flush_seq()) && op != op_flush()) {
		bump_counter(offsetof(struct bh_counters, flush_seq_data));
		return;
	}

	__u64 now = bpf_ktime_get_ns();
	__u64 issue = 0;
	__u64 key = ptr_id(rq);
	if (!force_inflight && (rqf & rqf_stats())) {
		issue = READ(rq, io_start_time_ns);
	} else {
		struct bh_rqinfo *ri = rqinfo_of(key);
		if (ri && ri->key == key && ri->issue_ns)
			issue = ri->issue_ns;
		else
			bump_counter(offsetof(struct bh_counters, issue_unknown));
	}
	__u64 start = READ(rq, start_time_ns);

	struct bh_io io = {};
	io.now = now;
	io.dev = H(rq_dev)(rq, rqf);
	io.cls = cls_of(cmd);
	io.device_ns = -1;
	io.queue_ns = -1;
	if (issue && now >= issue) {
		io.device_ns = now - issue;
		if (start && issue >= start)
			io.queue_ns = issue - start;
	} else if (start && now >= start) {
		/* Never issued to the driver (the empty write of a flush sequence) or issued before
		 * we attached: its whole time is the best device time there is. */
		io.device_ns = now - start;
	}
	io.counted = true;
	if (samples_enabled) {
		io.sector = READ(rq, __sector);
		io.bytes = (rqf & rqf_stats()) ? ((__u32)READ(rq, stats_sectors) << 9) : data_len;
		io.submitter_key = key;
	}
	record_io(&io);
}

/* block_bio_queue: bio-based disks only (zram, dm, md, bcache); blk-mq disks are timed by
 * their requests, so their bios return after one check. */
static __always_inline void H(on_bio_queue)(struct bio *bio)
{
	struct block_device *bdev = READ(bio, bi_bdev);
	if (!bdev)
		return;
	if (READ(bdev, bd_disk, queue, mq_ops))
		return;
	__u64 key = ptr_id(bio);
	struct bh_bio_start st = {};
	st.ts = bpf_ktime_get_ns();
	st.sector = READ(bio, bi_iter.bi_sector);
	st.bytes = READ(bio, bi_iter.bi_size);
	if (samples_enabled) {
		st.pid_tgid = bpf_get_current_pid_tgid();
		st.task = bpf_get_current_task();
	}
	if (bpf_map_update_elem(&bio_start, &key, &st, BPF_ANY))
		bump_counter(offsetof(struct bh_counters, inflight_full));
}

/* block_bio_complete: a bio-based disk's I/O is done. */
static __always_inline void H(on_bio_complete)(struct request_queue *q, struct bio *bio)
{
	if (!q || READ(q, mq_ops))
		return;
	__u64 key = ptr_id(bio);
	struct bh_bio_start *st = bpf_map_lookup_elem(&bio_start, &key);
	struct block_device *bdev = READ(bio, bi_bdev);
	if (!bdev) {
		bump_counter(offsetof(struct bh_counters, bio_unknown_dev));
		return;
	}
	struct bh_io io = {};
	io.now = bpf_ktime_get_ns();
	io.dev = READ(bdev, bd_dev);
	io.cls = cls_of(READ(bio, bi_opf));
	io.device_ns = -1;
	io.queue_ns = -1;
	if (!st) {
		/* Started before we attached (or evicted): note it, but do not count an I/O we
		 * cannot time; bio-based disks have no /proc/diskstats identity to keep. */
		io.counted = false;
		record_io(&io);
		return;
	}
	io.counted = true;
	if (io.now >= st->ts)
		io.device_ns = io.now - st->ts;
	io.sector = st->sector;
	io.bytes = st->bytes;
	io.bio_start = st;
	record_io(&io);
	bpf_map_delete_elem(&bio_start, &key);
}
