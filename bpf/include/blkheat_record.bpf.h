/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every hook shares: the kernel's request layout and flags resolved by CO-RE, class codes,
 * and recording a finished I/O (its second, histogram, buckets, size class and sample).
 *
 * Include only from blkheat.bpf.c, after the knobs and blkheat_maps.bpf.h.
 */

/* ---- kernel layout, resolved by CO-RE ---- */

/* Before 5.16 a request named its disk directly. */
struct request___rq_disk {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

static __always_inline __u32 op_mask(void)
{
	return req_bits.op_mask;
}

static __always_inline __u32 op_flush(void)
{
	return req_bits.op_flush;
}

static __always_inline bool op_is_passthrough(__u32 op)
{
	return op == req_bits.op_drv_in || op == req_bits.op_drv_out;
}

/* 0 where the kernel's BTF does not name the flag (before 6.9): the affected logic degrades
 * (issue timestamps from our own stamps only, flush-sequence data requests possibly counted at
 * both completions). */
static __always_inline __u32 rqf_flush_seq(void)
{
	return req_bits.rqf_flush_seq;
}

static __always_inline __u32 rqf_stats(void)
{
	return req_bits.rqf_stats;
}

static __always_inline __u32 rqf_io_stat(void)
{
	return req_bits.rqf_io_stat;
}

/* Class code: op plus the flags that name the class (see blkheat.h). */
static __always_inline __u16 cls_of(__u32 cmd)
{
	__u32 flags = (cmd >> (req_bits.cls_shift & 31)) & ((1u << BH_CLS_FLAG_TABLE_BITS) - 1);
	return (cmd & op_mask() & BH_CLS_OP_MASK) | cls_flag_table[flags];
}

/* ---- shared helpers ---- */

/* This CPU's private scratch state (struct bh_cpu_scratch); NULL only if the map lookup fails,
 * which the helpers below survive. One lookup per program run: the per-CPU array lookup is
 * inlined by the verifier, but each is still a dozen instructions. */
static __always_inline struct bh_cpu_scratch *cpu_scratch(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&cpu_scratch_map, &zero);
}

/* A pointer as a plain number, for hashing and map keys. The verifier forbids arithmetic on
 * trusted BTF pointers and restores the pointer type when a spill is read back from the
 * stack, but a map value always reads back as a scalar (privileged programs may store
 * pointers there). */
static __always_inline __u64 ptr_id(struct bh_cpu_scratch *cs, const void *p)
{
	if (!cs)
		return 0;
	cs->ptr = (__u64)p;
	return *(volatile __u64 *)&cs->ptr;
}

static __always_inline void bump_counter(__u32 offset)
{
	__u32 zero = 0;
	struct bh_counters *c = bpf_map_lookup_elem(&counters, &zero);
	if (c && offset + sizeof(__u64) <= sizeof(*c))
		*(__u64 *)((char *)c + offset) += 1;
}

/* The index of `key` in a table of 2^`bits` entries: Fibonacci hashing (the golden ratio's 64-bit
 * multiplier, the top `bits` bits), the one hash of every direct-mapped or probed table here. */
static __always_inline __u32 hash_index(__u64 key, __u32 bits)
{
	return (__u32)((key * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
}

/* The per-request slot of request `id` (ptr_id) of disk `dev` (only read when shared_slot_dev is set). */
static __always_inline struct bh_rq_slot *rq_slot_of(__u64 id, __u32 dev)
{
	__u32 idx = hash_index(id, BH_RQ_BITS);
	if (shared_slot_dev && dev == shared_slot_dev)
		idx = 0;
	return bpf_map_lookup_elem(&rq_slots, &idx);
}

/* Adds a counted I/O to its disk's running count (struct bh_disk_counts): the entry whose dev
 * it is, or the first free one, among BH_DISK_PROBES from the dev's hash. Entries are only ever
 * claimed, never freed, and each CPU has its own table: no lock, no atomic. */
static __always_inline void count_disk(__u32 dev, __u16 cls)
{
	if (cls & BH_CLS_NOSTAT)
		return;
	/* No op is numbered 64 or up (the highest is REQ_OP_DRV_OUT, 35); should one appear, its I/O
	 * is said to be missing from the table, as for a disk with no room. */
	if ((cls & BH_CLS_OP_MASK) >= sizeof(op_group)) {
		bump_counter(offsetof(struct bh_counters, disk_counts_full));
		return;
	}
	__u8 g = op_group[cls & (sizeof(op_group) - 1)];
	__u32 zero = 0;
	struct bh_disk_counts *t = bpf_map_lookup_elem(&disk_counts, &zero);
	if (!t)
		return;
	__u32 idx = (dev * 0x9E3779B1u) >> (32 - BH_DISK_SLOT_BITS);
	for (int i = 0; i < BH_DISK_PROBES; i++) {
		struct bh_disk_count *e = &t->e[(idx + i) & (BH_DISK_SLOTS - 1)];
		if (!e->used) {
			e->dev = dev;
			e->used = 1;
		} else if (e->dev != dev) {
			continue;
		}
		e->n[g & (BH_NR_GROUPS - 1)]++;
		return;
	}
	bump_counter(offsetof(struct bh_counters, disk_counts_full));
}

/* One finished I/O, whichever hook saw it. */
struct bh_io {
	__u64 now;
	__s64 device_ns; /* -1 = unknown */
	__s64 queue_ns;  /* -1 = unknown */
	__u64 sector;
	__u64 pid_tgid;                 /* submitter (0 = unknown), bio-based disks */
	__u64 task;
	__u64 rq_id;                    /* request-based disks: the request, whose slot names the submitter */
	__u64 cgroup;                   /* charged cgroup (bh_hist_key.cgroup) */
	__s64 submit_ns; /* -1 = unknown (bio-based disks, or the bio's submission not seen) */
	__s64 total_ns;  /* -1 = unknown; known whenever submit_ns is */
	__u32 status;                   /* blk_status_t, 0 = success */
	__u32 dev;
	__u32 bytes;
	__u16 cls;
	bool counted; /* false: only note a completion whose start was missed */
	__u32 bio_flags; /* enum bh_bio_flags of its first bio: the causes of submit wait it met */
};

/* Size class of an I/O: the smallest s with bytes <= 2^s (4 KiB -> 12, 1 MiB -> 20); 0 for none
 * (and for 1 byte). */
static __always_inline __u8 size_log2(__u32 bytes)
{
	return bytes > 1 ? bh_msb(bytes - 1) + 1 : 0;
}

/* The histogram entry of `key` in this CPU's partition of hists (see blkheat_maps.bpf.h): the
 * entry whose published claim is the key's slot and whose key matches, or the first free one on
 * the probe path, claimed. Claims take a compare-and-swap (once per key, CPU and second), since a
 * program in an interrupt may probe the same partition meanwhile: it skips a busy entry and
 * claims another, and the agent adds up two entries of one key like any other two. */
static __always_inline struct bh_hist *hist_for(struct bh_hist_key *key)
{
	__u32 base = bpf_get_smp_processor_id() << BH_HIST_CPU_BITS;
	__u64 mix = (((__u64)key->dev << 32) | key->slot) ^ (((__u64)key->size_log2 << 16 | key->cls) << 40) ^ key->cgroup;
	__u32 home = hash_index(mix, BH_HIST_CPU_BITS);
	for (__u32 i = 0; i < BH_HIST_PROBES; i++) {
		__u32 idx = base | ((home + i) & (BH_HIST_PER_CPU - 1));
		__u64 *claim = bpf_map_lookup_elem(&hist_claims, &idx);
		struct bh_hist_key *k = bpf_map_lookup_elem(&hist_keys, &idx);
		if (!claim || !k)
			return NULL;
		__u64 c = *(volatile __u64 *)claim;
		if (c == key->slot) {
			if (k->dev == key->dev && k->cls == key->cls && k->size_log2 == key->size_log2 &&
			    k->cgroup == key->cgroup)
				return bpf_map_lookup_elem(&hists, &idx);
			continue;
		}
		if (c != BH_CLAIM_FREE || __sync_val_compare_and_swap(claim, BH_CLAIM_FREE, BH_CLAIM_BUSY) != BH_CLAIM_FREE)
			continue;
		*k = *key;
		/* Publish: a full barrier, so whoever sees the slot sees the whole key. */
		__sync_val_compare_and_swap(claim, BH_CLAIM_BUSY, key->slot);
		return bpf_map_lookup_elem(&hists, &idx);
	}
	return NULL;
}

extern struct task_struct *bpf_task_from_pid(__s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

/* The comm of the task that issued an I/O, into comm[16], for the few I/Os sampled or listed in
 * flight; true when known (else comm is left zeroed). The issue keeps the task's pid_tgid and,
 * from raw_tp programs, its address (`task`). By address: trusted only while the task there
 * still has that tgid, as it may have exited. by_pid (tp_btf programs and the in-flight scan: a
 * raw_tp program may not call kfuncs): the task is found by its thread id, so the issue pays one
 * helper call, not a task pointer and two loads (~15 ns per I/O here). */
static __always_inline bool submitter_comm(__u64 pid_tgid, __u64 task, bool by_pid, char *comm)
{
	int tgid = 0;
	if (!pid_tgid)
		return false;
	if (task) {
		const struct task_struct *t = (const struct task_struct *)task;
		if (!bpf_probe_read_kernel(&tgid, sizeof(tgid), &t->tgid) && (__u32)tgid == (__u32)(pid_tgid >> 32) &&
		    !bpf_probe_read_kernel(comm, BH_COMM_LEN, &t->comm))
			return true;
	} else if (by_pid && bpf_task_from_pid) {
		struct task_struct *t = bpf_task_from_pid((__s32)(__u32)pid_tgid);
		if (!t)
			return false;
		bool known = (__u32)t->tgid == (__u32)(pid_tgid >> 32) && !bpf_probe_read_kernel(comm, BH_COMM_LEN, &t->comm);
		bpf_task_release(t);
		if (known)
			return true;
	}
	__builtin_memset(comm, 0, BH_COMM_LEN);
	return false;
}

/* A uniform 32-bit draw for fair sampling, from a per-CPU xorshift64 (seeded by the kernel's
 * generator on each CPU's first draw). Why not bpf_get_prandom_u32() per I/O: a helper call of
 * ~22 ns here, against a few instructions; sampling needs uniform draws, not secret ones. */
static __always_inline __u32 fair_draw(struct bh_cpu_scratch *cs)
{
	if (!cs)
		return bpf_get_prandom_u32();
	__u64 *state = &cs->rng;
	__u64 x = *state;
	if (!x)
		x = ((__u64)bpf_get_prandom_u32() << 32) | bpf_get_prandom_u32() | 1;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x >> 32;
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

/* by_pid: see submitter_comm (a constant of each hook flavour). */
static __always_inline bool emit_sample(struct bh_io *io, __u32 slot, bool outlier, bool by_pid)
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
	s->flags = (outlier ? BH_SAMPLE_OUTLIER : 0) | (io->queue_ns >= 0 ? BH_SAMPLE_QUEUE_KNOWN : 0) |
		   (io->submit_ns >= 0 ? BH_SAMPLE_SUBMIT_KNOWN : 0);
	s->submit_ns = io->submit_ns >= 0 ? io->submit_ns : 0;
	s->pid = 0;
	s->cgroup_id = io->cgroup;
	__builtin_memset(s->comm, 0, sizeof(s->comm));

	__u64 pid_tgid = io->pid_tgid, task = io->task;
	if (io->rq_id) {
		struct bh_rq_slot *sl = rq_slot_of(io->rq_id, io->dev);
		if (sl && sl->key == io->rq_id) {
			pid_tgid = sl->pid_tgid;
			task = sl->task;
		}
	}
	if (pid_tgid) {
		s->pid = pid_tgid >> 32;
		if (submitter_comm(pid_tgid, task, by_pid, s->comm))
			s->flags |= BH_SAMPLE_SUBMITTER_KNOWN;
	}
	bpf_ringbuf_submit(s, BPF_RB_NO_WAKEUP);
	return true;
}

/* Wall-clock second of a monotonic time; the per-CPU cache makes the division rare. */
static __always_inline __u32 slot_of(struct bh_cpu_scratch *cs, __u64 now, __s64 offset)
{
	struct bh_slot_cache *c = cs ? &cs->second : NULL;
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

/* cs: this CPU's scratch (cpu_scratch), looked up once by the hook. by_pid: how the submitter's
 * comm is found for a sample (submitter_comm); a constant of each hook flavour, so that the
 * raw_tp programs hold no kfunc call. */
static __always_inline void record_io(struct bh_io *io, struct bh_cpu_scratch *cs, bool by_pid)
{
	/* Other disks are not ours to count (and must not spend the sample budget). */
	if (filter_disks && !bpf_map_lookup_elem(&disk_filter, &io->dev))
		return;
	__u32 zero = 0;
	struct bh_settings *cfg = bpf_map_lookup_elem(&settings, &zero);
	if (!cfg)
		return;
	__u32 slot = slot_of(cs, io->now, cfg->wall_offset_ns);
	struct bh_hist_key key = {
		.slot = slot, .dev = io->dev, .cls = io->cls, .size_log2 = size_log2(io->bytes), .cgroup = io->cgroup
	};
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
	/* After the histogram's own count: an I/O the agent sees here is already in the map. */
	bump_counter(offsetof(struct bh_counters, counted));
	count_disk(io->dev, io->cls);
	h->bytes += io->bytes;
	if (io->status) {
		__u32 st = io->status < BH_NR_STATUS ? io->status : BH_NR_STATUS - 1;
		h->errors[st]++;
		bump_counter(offsetof(struct bh_counters, errors));
	}
	__u32 b = 0;
	if (io->device_ns >= 0) {
		b = bh_bucket_of(io->device_ns);
		h->device[b]++;
	} else {
		h->missed++;
	}
	if (io->queue_ns >= 0) {
		h->queue[bh_bucket_of(io->queue_ns)]++;
	}
	if (io->total_ns >= 0) {
		h->submit[bh_bucket_of(io->submit_ns)]++;
		h->total[bh_bucket_of(io->total_ns)]++;
	} else if (submit_phase && io->rq_id) {
		h->submit_unknown++;
	}
	if (io->bio_flags) {
		__u32 f = io->bio_flags;
		h->frozen += !!(f & BH_BIO_FROZEN);
		h->refused += !!(f & BH_BIO_REFUSED);
	}

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
	else if (fair_draw(cs) >= cfg->fair_threshold) {
		h->dropped++;
		return;
	}
	if (!take_budget(slot, outlier, cfg) || !emit_sample(io, slot, outlier, by_pid))
		h->dropped++;
}
