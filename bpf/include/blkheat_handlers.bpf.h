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

/* dev_t of the whole disk of a request. */
static __always_inline __u32 H(disk_dev)(struct request *rq)
{
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

/* Disk dev_t of a request: the partition when the kernel accounted the request to one,
 * otherwise the whole disk (flush requests of a flush sequence carry no partition). */
static __always_inline __u32 H(rq_dev)(struct request *rq, __u32 rqf)
{
	if (rqf & rqf_io_stat()) {
		struct block_device *part = READ(rq, part);
		if (part)
			return READ(part, bd_dev);
	}
	return H(disk_dev)(rq);
}

/* Class code of a finished request: the op and its flags, and BH_CLS_NOSTAT where the kernel does
 * not count it in /proc/diskstats. blk_account_io_done() counts a request when it has
 * RQF_IO_STAT and not RQF_FLUSH_SEQ; the flush request of a flush sequence (REQ_OP_FLUSH, never
 * RQF_IO_STAT) is counted by blk_account_io_flush() instead; passthrough commands never get
 * RQF_IO_STAT (blk_account_io_start() skips them). */
static __always_inline __u16 H(rq_cls)(__u32 cmd, __u32 rqf)
{
	__u32 op = cmd & op_mask();
	__u16 cls = cls_of(cmd);
	if (op == op_flush())
		return cls;
	if (op_is_passthrough(op) || (rqf_io_stat() && !(rqf & rqf_io_stat())))
		cls |= BH_CLS_NOSTAT;
	return cls;
}

/* block_io_start: a request is made from a bio (blk_mq_bio_to_request) or a passthrough command
 * is queued, in the submitting task. Stamps the start with our clock and who submitted it. */
static __always_inline void H(on_io_start)(struct request *rq)
{
	__u64 id = ptr_id(rq);
	struct bh_rq_slot *sl = rq_slot_of(id);
	if (!sl)
		return;
	if (sl->key != id) {
		/* A request of another life still in flight here would lose its timing: rare (64 Ki
		 * slots, a few hundred requests per queue), counted, and timed from the kernel's own
		 * fields at its completion instead. */
		if (sl->key && sl->issue_ns)
			bump_counter(offsetof(struct bh_counters, slot_taken));
		sl->key = id;
	}
	sl->start_ns = bpf_ktime_get_ns();
	sl->issue_ns = 0;
	sl->pid_tgid = bpf_get_current_pid_tgid();
	sl->task = bpf_get_current_task();
}

/* block_rq_issue: the driver gets the request (again, after a requeue). The flush request of a
 * flush sequence has no block_io_start: it takes its slot here. */
static __always_inline void H(on_rq_issue)(struct request *rq)
{
	__u64 id = ptr_id(rq);
	struct bh_rq_slot *sl = rq_slot_of(id);
	if (!sl)
		return;
	if (sl->key != id) {
		sl->key = id;
		sl->start_ns = 0;
		sl->pid_tgid = 0;
		sl->task = 0;
	}
	sl->issue_ns = bpf_ktime_get_ns();
}

/* block_rq_requeue: the request goes back to the queue and will be issued again. */
static __always_inline void H(on_rq_requeue)(struct request *rq)
{
	bump_counter(offsetof(struct bh_counters, requeues));
	__u32 rqf = READ(rq, rq_flags);
	__u32 dev = H(rq_dev)(rq, rqf);
	if (filter_disks && !bpf_map_lookup_elem(&disk_filter, &dev))
		return;
	__u32 zero = 0;
	struct bh_settings *cfg = bpf_map_lookup_elem(&settings, &zero);
	if (!cfg)
		return;
	struct bh_hist_key key = { .slot = slot_of(bpf_ktime_get_ns(), cfg->wall_offset_ns), .dev = dev,
				   .cls = H(rq_cls)(READ(rq, cmd_flags), rqf) };
	struct bh_hist *h = hist_for(&key);
	if (h)
		h->requeues++;
}

/* block_rq_complete: the I/O is done when this completion covers every remaining byte. */
static __always_inline void H(on_rq_complete)(struct request *rq, int error, unsigned int nr_bytes)
{
	__u32 data_len = READ(rq, __data_len);
	if (nr_bytes < data_len) {
		bump_counter(offsetof(struct bh_counters, partial));
		return;
	}
	__u32 cmd = READ(rq, cmd_flags);
	__u32 rqf = READ(rq, rq_flags);
	/* The data request of a flush sequence completes twice: once from the driver (still
	 * marked RQF_FLUSH_SEQ) and once when the sequence ends (blk_flush_restore_request() clears
	 * the flag first). Count it at the end, as /proc/diskstats does. */
	if ((rqf & rqf_flush_seq()) && (cmd & op_mask()) != op_flush()) {
		bump_counter(offsetof(struct bh_counters, flush_seq_data));
		return;
	}

	struct bh_io io = {};
	io.now = bpf_ktime_get_ns();
	io.dev = H(rq_dev)(rq, rqf);
	io.cls = H(rq_cls)(cmd, rqf);
	io.status = (__u32)error & 0xff;
	io.device_ns = -1;
	io.queue_ns = -1;
	io.counted = true;

	__u64 start = 0, issue = 0, id = ptr_id(rq);
	struct bh_rq_slot *sl = rq_slot_of(id);
	bool ours = sl && sl->key == id;
	if (ours) {
		start = sl->start_ns;
		issue = sl->issue_ns;
		io.pid_tgid = sl->pid_tgid;
		io.task = sl->task;
	}
	if (!ours || kernel_times) {
		/* Our slot was taken (or the request began before we attached): the kernel's own
		 * stamps, where it keeps them. */
		if (!kernel_times)
			bump_counter(offsetof(struct bh_counters, kernel_times));
		start = READ(rq, start_time_ns);
		if (rqf & rqf_stats())
			issue = READ(rq, io_start_time_ns);
	}
	if (issue && io.now >= issue) {
		io.device_ns = io.now - issue;
		if (start && issue >= start)
			io.queue_ns = issue - start;
	} else if (start && io.now >= start) {
		/* Never issued to a driver: the empty write of a flush sequence waits only for the
		 * flush, and its whole time is its device time. */
		io.device_ns = io.now - start;
	}
	if (samples_enabled) {
		io.sector = READ(rq, __sector);
		io.bytes = (rqf & rqf_stats()) ? ((__u32)READ(rq, stats_sectors) << 9) : data_len;
	}
	record_io(&io);
}

/* block_bio_queue: fires for every bio, in the submitting task. Bio-based disks (zram, dm, md,
 * bcache) are timed from here. */
static __always_inline void H(on_bio_queue)(struct bio *bio)
{
	struct block_device *bdev = READ(bio, bi_bdev);
	if (!bdev)
		return;
	/* blk-mq disks are timed by their requests. */
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
		bump_counter(offsetof(struct bh_counters, bio_start_full));
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
	io.pid_tgid = st->pid_tgid;
	io.task = st->task;
	io.status = READ(bio, bi_status);
	record_io(&io);
	bpf_map_delete_elem(&bio_start, &key);
}
