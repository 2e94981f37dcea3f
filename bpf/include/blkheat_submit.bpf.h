/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The submit phase's lookups (submit_phase; docs/accounting.md, Submit wait): each blk-mq bio's
 * slot (bio_slots), the refused REQ_NOWAIT bios awaiting their resubmission (refusals), and a
 * finished request's submit wait and total from its first bio's slot. The hooks that write them
 * are in blkheat_handlers.bpf.h.
 *
 * Include only from blkheat.bpf.c, after blkheat_record.bpf.h (struct bh_io).
 */

/* The per-bio slot of bio `id` (ptr_id). */
static __always_inline struct bh_bio_slot *bio_slot_of(__u64 id)
{
	__u32 idx = hash_index(id, BH_BIO_BITS);
	return bpf_map_lookup_elem(&bio_slots, &idx);
}

/* The refusals entry of an I/O of disk `dev` at `sector`. */
static __always_inline struct bh_refusal *refusal_of(__u32 dev, __u64 sector)
{
	__u32 idx = hash_index(sector ^ ((__u64)dev << 40), BH_REFUSAL_BITS);
	return bpf_map_lookup_elem(&refusals, &idx);
}

/* Fills bio `id`'s slot: submitted at `submit_ns` (a split-off bio: its parent's), on disk `dev`,
 * with enum bh_bio_flags `flags`, waiting for its request. */
static __always_inline void fill_bio_slot(struct bh_bio_slot *sl, __u64 id, __u64 submit_ns, __u32 dev, __u32 flags)
{
	sl->key = id;
	sl->submit_ns = submit_ns;
	sl->request = 0;
	sl->dev = dev;
	sl->flags = flags;
}

/* The submit wait and total of a request whose first bio is `bio_id`, from the bio's slot and the
 * request's start_time_ns (`kernel_start`, the kernel's clock at its allocation: CLOCK_MONOTONIC,
 * like ours); returns the allocation (0 when not known). Inside a plug the kernel's clock is the
 * plug's, cached at its first request: older than this bio when the bio did not wait (a wait
 * schedules, which drops the cached clock), and the allocation is then the submission itself.
 * Not known (left -1, counted as submit_unknown) for a bio merged in front of its request, one
 * submitted before blkheat attached, one whose slot another bio took while it was in flight, or a
 * request with no start_time_ns (a queue with iostats off and no scheduler). */
static __always_inline __u64 submit_times(struct bh_io *io, __u64 bio_id, __u64 kernel_start)
{
	struct bh_bio_slot *sl = bio_slot_of(bio_id);
	if (!bio_id || !sl || sl->key != bio_id || sl->request != BH_BIO_ALLOCATED)
		return 0;
	__u64 submit = sl->submit_ns;
	__u64 got = kernel_start > submit ? kernel_start : submit;
	if (!submit || !kernel_start || io->now < got)
		return 0;
	io->submit_ns = got - submit;
	io->total_ns = io->now - submit;
	io->bio_flags = sl->flags;
	return got;
}
