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

/* block_rq_issue: the driver gets the request. Books the issue, and takes our own issue
 * timestamp only where the kernel will not keep one: with QUEUE_FLAG_STATS set (wbt,
 * iolatency, ... — the common case), blk_mq_start_request() writes rq->io_start_time_ns
 * right after this tracepoint. */
static __always_inline void H(on_rq_issue)(struct request *rq)
{
	__u64 id = ptr_id(rq);
	__u32 idx;
	struct bh_issued *is = issued_slot(id, true, &idx);
	if (!is)
		return;
	/* Only this request issues into its slot (others take the other slot of the pair or mark
	 * it shared), and a request is issued by one CPU at a time: no atomic needed. */
	is->issued++;
	if (!force_inflight && queue_flag_stats_bit < 64) {
		__u32 op = READ(rq, cmd_flags) & op_mask();
		unsigned long qflags = READ(rq, q, queue_flags);
		/* Passthrough and flush requests get no kernel issue timestamp even there. */
		if (((qflags >> queue_flag_stats_bit) & 1) && !op_is_passthrough(op) && op != op_flush())
			return;
	}
	is->issue_ns = bpf_ktime_get_ns();
}

/* block_rq_requeue: the request goes back to the queue and will be issued again. */
static __always_inline void H(on_rq_requeue)(struct request *rq)
{
	bump_counter(offsetof(struct bh_counters, requeues));
	__u32 idx;
	struct bh_issued *is = issued_slot(ptr_id(rq), false, &idx);
	if (is)
		__sync_fetch_and_add(&is->requeued, 1);
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
	/* Book the delivered completion: of an issued request in its books; of a request the driver
	 * never got (the empty write of a flush sequence, still IDLE) in its bio's shell record —
	 * unless the sweeper already counted that one as unseen, then it must not count twice. */
	if (READ(rq, state) == bpf_core_enum_value(enum mq_rq_state, MQ_RQ_IDLE)) {
		struct bio *first = READ(rq, bio);
		if (first) {
			__u64 bid = ptr_id(first);
			struct bh_shell *sh = shell_of(bid);
			if (sh && sh->key == bid &&
			    __sync_val_compare_and_swap(&sh->state, BH_SHELL_PENDING, BH_SHELL_DONE) != BH_SHELL_PENDING &&
			    sh->state == BH_SHELL_CLAIMED)
				return;
		}
	} else {
		__u32 pair = rq_pair(key);
		__u32 *done = bpf_map_lookup_elem(&rq_completed, &pair);
		if (done)
			*done += 1;
	}
	if (!force_inflight && (rqf & rqf_stats())) {
		issue = READ(rq, io_start_time_ns);
	} else {
		__u32 idx;
		struct bh_issued *is = issued_slot(key, false, &idx);
		if (is && is->issue_ns)
			issue = is->issue_ns;
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
		/* The submitter was booked under the request's first bio (see on_bio_queue). */
		struct bio *first = READ(rq, bio);
		io.submitter_key = first ? ptr_id(first) : 0;
	}
	record_io(&io);
}

/* Books an empty flush write (see struct bh_shell). If the same bio is queued again while its
 * previous use is still pending — fsync's bio lives on the caller's stack and comes back at the
 * next fsync — that previous one completed unseen. */
static __always_inline void H(book_shell)(struct bio *bio, struct block_device *bdev, __u32 opf)
{
	__u64 id = ptr_id(bio);
	struct bh_shell *sh = shell_of(id);
	if (!sh)
		return;
	if (sh->key == id && __sync_val_compare_and_swap(&sh->state, BH_SHELL_PENDING, BH_SHELL_CLAIMED) == BH_SHELL_PENDING) {
		bump_counter(offsetof(struct bh_counters, shell_unseen));
		count_unseen_completion(sh->dev, sh->cls);
	}
	sh->key = id;
	sh->booked_ns = bpf_ktime_get_ns();
	sh->dev = READ(bdev, bd_dev);
	/* The flush machinery turns it into a Sync-Write without the Preflush flag. */
	sh->cls = (cls_of(opf) & ~BH_CLS_PREFLUSH) | BH_CLS_SYNC;
	sh->state = BH_SHELL_PENDING;
}

/* block_bio_queue: fires for every bio, in the submitting task. For blk-mq disks (timed by
 * their requests) it books who submitted the bio, read back only for sampled I/Os via the
 * request's first bio; bio-based disks (zram, dm, md, bcache) are timed from here. */
static __always_inline void H(on_bio_queue)(struct bio *bio)
{
	struct block_device *bdev = READ(bio, bi_bdev);
	if (!bdev)
		return;
	if (READ(bdev, bd_disk, queue, mq_ops)) {
		__u32 opf = READ(bio, bi_opf);
		if (!READ(bio, bi_iter.bi_size) && (opf & FLAG_BIT(__REQ_PREFLUSH)))
			H(book_shell)(bio, bdev, opf);
		if (!samples_enabled)
			return;
		__u64 id = ptr_id(bio);
		struct bh_submitter *sa, *sb;
		if (!submitter_ways(id, &sa, &sb))
			return;
		struct bh_submitter *s = sa->ts <= sb->ts ? sa : sb;
		s->key = id;
		s->pid_tgid = bpf_get_current_pid_tgid();
		s->task = bpf_get_current_task();
		s->ts = bpf_ktime_get_ns();
		return;
	}
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
