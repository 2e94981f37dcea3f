/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * blkheat's hook logic, written once and instantiated twice by blkheat.bpf.c:
 *  - with READ = direct loads through BTF pointers (tp_btf: typed arguments, no helper call
 *    per field, CO-RE relocated through vmlinux.h's preserve_access_index),
 *  - with READ = BPF_CORE_READ (raw_tp fallback: untyped arguments, bpf_probe_read_kernel).
 * H(name) gives each instantiation its own function names, and COMM_BY_PID says whether its
 * programs may call kfuncs (see submitter_comm).
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

/* The cgroup a bio is charged to (see bh_hist_key.cgroup); 0 = none. */
static __always_inline __u64 H(bio_cgroup)(struct bio *bio)
{
	if (!bpf_core_field_exists(struct bio, bi_blkg) || !bio)
		return 0;
	struct blkcg_gq *blkg = READ(bio, bi_blkg);
	if (!blkg)
		return 0;
	return READ(blkg, blkcg, css.cgroup, kn, id);
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

/* block_rq_issue: the driver gets the request (again, after a requeue). Stamps the issue with
 * our clock and notes the issuing task: the submitter itself for direct and plugged dispatch
 * (blk_mq_submit_bio(), blk_finish_plug()); with an I/O scheduler, possibly another task that ran
 * the queue. Everything is written on this CPU; the completion reads it only when it must. */
static __always_inline void H(on_rq_issue)(struct request *rq)
{
	__u64 id = ptr_id(cpu_scratch(), rq);
	struct bh_rq_slot *sl = rq_slot_of(id, shared_slot_dev ? H(rq_dev)(rq, READ(rq, rq_flags)) : 0);
	if (!sl)
		return;
	/* Stores only: the slot's line was last read by the completing CPU, and a load here would
	 * wait for it to come back (the costliest instruction of this program when it read the
	 * key first); stores retire through the store buffer. A slot another in-flight request
	 * still held is found, and counted, at that request's completion. */
	sl->key = id;
	sl->issue_ns = bpf_ktime_get_ns();
	if (COMM_BY_PID) {
		/* The task's comm is found later by its thread id (submitter_comm). sl->task stays 0:
		 * only one flavour's programs are loaded with a map, and none of these writes it. */
		sl->pid_tgid = bpf_get_current_pid_tgid();
	} else {
		/* The task's ids are read from it: one helper call instead of two. */
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();
		sl->pid_tgid = ((__u64)READ(task, tgid) << 32) | (__u32)READ(task, pid);
		sl->task = (__u64)task;
	}
}

/* Bytes of a request at its final completion: the size it was issued with where the kernel keeps
 * it (stats_sectors, RQF_STATS), else what is left to complete (all of it, unless the request
 * completed in parts). */
static __always_inline __u32 H(rq_bytes)(struct request *rq, __u32 rqf, __u32 data_len)
{
	return (rqf & rqf_stats()) ? ((__u32)READ(rq, stats_sectors) << 9) : data_len;
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
	struct bh_hist_key key = { .slot = slot_of(cpu_scratch(), bpf_ktime_get_ns(), cfg->wall_offset_ns),
				   .dev = dev,
				   .cls = H(rq_cls)(READ(rq, cmd_flags), rqf),
				   .size_log2 = size_log2(H(rq_bytes)(rq, rqf, READ(rq, __data_len))),
				   .cgroup = H(bio_cgroup)(READ(rq, bio)) };
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
	io.submit_ns = -1;
	io.total_ns = -1;
	io.counted = true;

	/* The kernel's own stamps first: the request's lines are hot here, while our slot's line
	 * was written on the issuing CPU (a cache miss to read). They are exact unless both came
	 * from one cached plug clock (equal: blk_time_get_ns() inside a plug) or the queue keeps no
	 * issue stamp (no QUEUE_FLAG_STATS): only then our issue stamp is read. Inside a plug the
	 * start is the plug's clock, taken at its first request: queue time is then an upper bound,
	 * never a false 0. */
	__u64 start = READ(rq, start_time_ns);
	__u64 issue = (rqf & rqf_stats()) ? READ(rq, io_start_time_ns) : 0;
	/* The submitter in the request's slot is read only for sampled I/Os (emit_sample). */
	struct bh_cpu_scratch *cs = cpu_scratch();
	io.rq_id = ptr_id(cs, rq);
	if (!kernel_times && (!issue || issue == start)) {
		struct bh_rq_slot *sl = rq_slot_of(io.rq_id, io.dev);
		if (sl && sl->key == io.rq_id && sl->issue_ns >= start) {
			issue = sl->issue_ns;
		} else {
			/* Another request was issued into this slot while this one was in flight. */
			if (sl && sl->key && sl->key != io.rq_id)
				bump_counter(offsetof(struct bh_counters, slot_taken));
			bump_counter(offsetof(struct bh_counters, kernel_times));
		}
	}
	/* The request's first bio names its cgroup (merged bios of one request share a blkcg:
	 * blk_mq's merge checks refuse bios of another), and its submission starts the I/O.
	 * Passthrough requests are made without a bio submission (their bios never pass
	 * block_bio_queue): their slot, if any, is another life's. Where the submission is known,
	 * the request's start is the moment it was allocated for the bio (block_getrq, our clock):
	 * the three phases then add up to the total exactly, and a plug's cached clock, older than
	 * the bio, is not its start. */
	struct bio *bio = READ(rq, bio);
	io.cgroup = H(bio_cgroup)(bio);
	if (submit_phase && !op_is_passthrough(cmd & op_mask())) {
		__u64 allocated = submit_times(&io, ptr_id(cs, bio), start);
		if (allocated)
			start = allocated;
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
	io.bytes = H(rq_bytes)(rq, rqf, data_len);
	if (samples_enabled)
		io.sector = READ(rq, __sector);
	record_io(&io, cs, COMM_BY_PID);
}

/* A blk-mq disk's bio is submitted: its slot takes the moment, its disk and whether the queue is
 * frozen (then bio_queue_enter, next in blk_mq_submit_bio, sleeps until it thaws). Stores only,
 * on the submitting CPU, where block_getrq reads them back. */
static __always_inline void H(stamp_submit)(struct bio *bio, struct block_device *bdev, struct request_queue *q)
{
	__u64 id = ptr_id(cpu_scratch(), bio);
	struct bh_bio_slot *sl = bio_slot_of(id);
	if (!sl)
		return;
	__u64 now = bpf_ktime_get_ns();
	__u32 dev = READ(bdev, bd_dev);
	__u32 flags = READ(q, mq_freeze_depth) > 0 ? BH_BIO_FROZEN : 0;
	__u64 submit = now;
	__u64 refused_at = last_refusal_ns;
	if (refused_at && now - refused_at < BH_REFUSAL_WINDOW_NS) {
		/* Refusals lately: this may be one's resubmission, which waits since the first. */
		__u64 sector = READ(bio, bi_iter.bi_sector);
		struct bh_refusal *r = refusal_of(dev, sector);
		if (r && r->submit_ns && r->dev == dev && r->sector == sector && r->bytes == READ(bio, bi_iter.bi_size) &&
		    r->submit_ns <= now) {
			submit = r->submit_ns;
			flags |= r->flags | BH_BIO_REFUSED;
			r->submit_ns = 0;
			bump_counter(offsetof(struct bh_counters, refusals_linked));
		}
	}
	fill_bio_slot(sl, id, submit, dev, flags);
}

/* A blk-mq disk's REQ_NOWAIT bio turned away before it had a request (BLK_STS_AGAIN from
 * bio_wouldblock_error(): no free tag, or a frozen queue): its first submission is kept for the
 * same I/O's resubmission (H(stamp_submit)). */
static __always_inline void H(note_refusal)(struct bio *bio)
{
	__u64 id = ptr_id(cpu_scratch(), bio);
	struct bh_bio_slot *sl = bio_slot_of(id);
	if (!sl || sl->key != id || sl->request)
		return;
	__u64 submit = sl->submit_ns;
	__u32 dev = sl->dev, flags = sl->flags;
	__u64 sector = READ(bio, bi_iter.bi_sector);
	struct bh_refusal *r = refusal_of(dev, sector);
	if (!r)
		return;
	__u64 now = bpf_ktime_get_ns();
	/* Another I/O's refusal, still waiting for its resubmission (within the window): lost. */
	if (r->submit_ns && (r->sector != sector || r->dev != dev) && now - r->submit_ns < BH_REFUSAL_WINDOW_NS)
		bump_counter(offsetof(struct bh_counters, refusals_overwritten));
	r->submit_ns = submit;
	r->sector = sector;
	r->dev = dev;
	r->bytes = READ(bio, bi_iter.bi_size);
	r->flags = flags;
	last_refusal_ns = now;
	bump_counter(offsetof(struct bh_counters, refusals_kept));
}

/* block_bio_queue: fires once for every bio (BIO_TRACE_COMPLETION keeps a resubmitted remainder
 * from firing again), in the submitting task, after blk-throttle let it through. Bio-based disks
 * (zram, dm, md, bcache) are timed from here; a blk-mq disk's bio starts its submit wait. */
static __always_inline void H(on_bio_queue)(struct bio *bio)
{
	struct block_device *bdev = READ(bio, bi_bdev);
	if (!bdev)
		return;
	struct request_queue *q = READ(bdev, bd_disk, queue);
	if (!q)
		return;
	if (READ(q, mq_ops)) {
		if (submit_phase)
			H(stamp_submit)(bio, bdev, q);
		return;
	}
	__u64 key = ptr_id(cpu_scratch(), bio);
	struct bh_bio_start st = {};
	st.ts = bpf_ktime_get_ns();
	st.sector = READ(bio, bi_iter.bi_sector);
	st.bytes = READ(bio, bi_iter.bi_size);
	if (samples_enabled) {
		st.pid_tgid = bpf_get_current_pid_tgid();
		st.task = COMM_BY_PID ? 0 : bpf_get_current_task();
	}
	if (bpf_map_update_elem(&bio_start, &key, &st, BPF_ANY))
		bump_counter(offsetof(struct bh_counters, bio_start_full));
}

/* block_bio_complete: a bio-based disk's I/O is done. */
static __always_inline void H(on_bio_complete)(struct request_queue *q, struct bio *bio)
{
	if (!q)
		return;
	if (READ(q, mq_ops)) {
		if (submit_phase && READ(bio, bi_status) == req_bits.sts_again)
			H(note_refusal)(bio);
		return;
	}
	struct bh_cpu_scratch *cs = cpu_scratch();
	__u64 key = ptr_id(cs, bio);
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
	io.submit_ns = -1;
	io.total_ns = -1;
	if (!st) {
		/* Started before we attached (or evicted): note it, but do not count an I/O we
		 * cannot time; bio-based disks have no /proc/diskstats identity to keep. */
		io.counted = false;
		record_io(&io, cs, COMM_BY_PID);
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
	io.cgroup = H(bio_cgroup)(bio);
	record_io(&io, cs, COMM_BY_PID);
	bpf_map_delete_elem(&bio_start, &key);
}

/* block_getrq: the bio has a request (new, or the plug's cached one): its submit wait ends. In
 * blk_mq_submit_bio this follows bio_queue_enter (the freeze), rq_qos_throttle (wbt, iocost) and
 * the tag allocation, and precedes blk_mq_bio_to_request (the request's start). */
static __always_inline void H(on_bio_getrq)(struct bio *bio)
{
	__u64 id = ptr_id(cpu_scratch(), bio);
	struct bh_bio_slot *sl = bio_slot_of(id);
	if (sl && sl->key == id && !sl->request)
		sl->request = BH_BIO_ALLOCATED;
}

/* block_bio_backmerge / frontmerge: the bio joined a request that already existed; it waits for
 * no request of its own (and is no longer a waiter for the in-flight scan). A front merge makes it
 * its request's first bio: that request's submission is then not known (see submit_times). */
static __always_inline void H(on_bio_merge)(struct bio *bio)
{
	__u64 id = ptr_id(cpu_scratch(), bio);
	struct bh_bio_slot *sl = bio_slot_of(id);
	if (sl && sl->key == id)
		sl->request = BH_BIO_MERGED;
}

/* block_split: `split`, a new bio for the front of its parent, goes on to get a request without
 * passing block_bio_queue, while the parent (the remainder) is resubmitted. bio_chain() made the
 * parent split->bi_private before the tracepoint: the split takes the parent's submission. */
static __always_inline void H(on_bio_split)(struct bio *split)
{
	struct bh_cpu_scratch *cs = cpu_scratch();
	__u64 parent = ptr_id(cs, READ(split, bi_private));
	struct bh_bio_slot *from = bio_slot_of(parent);
	if (!from || from->key != parent)
		return;
	__u64 submit = from->submit_ns;
	__u32 dev = from->dev, flags = from->flags;
	__u64 id = ptr_id(cs, split);
	struct bh_bio_slot *sl = bio_slot_of(id);
	if (sl)
		fill_bio_slot(sl, id, submit, dev, flags);
}
