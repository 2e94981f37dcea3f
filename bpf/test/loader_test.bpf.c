// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A tiny CO-RE program for the bpf-loader tests (not used by the agent). It counts completed
 * block requests per disk and pushes one ring-buffer record per completion, and carries one of
 * every kind of thing the loader must handle: a const volatile knob (.rodata), a .data switch,
 * a .bss counter, a hash map, a per-CPU array, a ring buffer and a scratch hash map that only
 * the tests write (for batch operations).
 *
 * Two flavours of the same hook: tp_btf (direct BTF-typed access, the default) and raw_tp
 * (BPF_CORE_READ; autoload off by default thanks to the "?" prefix). Tests pick one with
 * setAutoload().
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "loader_test.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Only count this disk (kernel dev_t, major << 20 | minor); 0 counts every disk. */
const volatile __u32 target_dev = 0;
/* Submit ring-buffer records with BPF_RB_NO_WAKEUP (the reader must drain with consume()). */
const volatile __u32 no_wakeup = 0;

/* .data: settable after load; 0 stops all counting. */
__u32 enabled = 1;

/* .bss: completions seen (after the filters), and records lost to a full ring buffer. */
__u64 total_events = 0;
__u64 ringbuf_drops = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LOADER_TEST_MAX_DISKS);
	__type(key, __u32);   /* dev */
	__type(value, __u64); /* completed requests */
} dev_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64); /* completions handled on this CPU */
} percpu_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LOADER_TEST_SCRATCH_ENTRIES);
	__type(key, __u32);
	__type(value, __u64);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

static __always_inline int record_completion(__u32 dev, __u64 sector, __u32 nr_bytes)
{
	struct loader_test_event *e;
	__u64 one = 1, *count;
	__u32 zero = 0;

	if (!enabled)
		return 0;
	if (target_dev && dev != target_dev)
		return 0;

	count = bpf_map_lookup_elem(&dev_counts, &dev);
	if (count)
		__sync_fetch_and_add(count, 1);
	else if (bpf_map_update_elem(&dev_counts, &dev, &one, BPF_NOEXIST) == -17 /* EEXIST */) {
		/* Another CPU inserted it first. */
		count = bpf_map_lookup_elem(&dev_counts, &dev);
		if (count)
			__sync_fetch_and_add(count, 1);
	}

	count = bpf_map_lookup_elem(&percpu_events, &zero);
	if (count)
		*count += 1;
	__sync_fetch_and_add(&total_events, 1);

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&ringbuf_drops, 1);
		return 0;
	}
	e->ts = bpf_ktime_get_ns();
	e->sector = sector;
	e->dev = dev;
	e->nr_bytes = nr_bytes;
	bpf_ringbuf_submit(e, no_wakeup ? BPF_RB_NO_WAKEUP : 0);
	return 0;
}

static __always_inline __u32 disk_dev(struct gendisk *disk)
{
	if (!disk)
		return 0;
	return ((__u32)BPF_CORE_READ(disk, major) << 20) | (__u32)BPF_CORE_READ(disk, first_minor);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(count_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	return record_completion(disk_dev(rq->q->disk), rq->__sector, nr_bytes);
}

SEC("?raw_tp/block_rq_complete")
int BPF_PROG(count_complete_raw, struct request *rq, int error, unsigned int nr_bytes)
{
	struct gendisk *disk = BPF_CORE_READ(rq, q, disk);

	return record_completion(disk_dev(disk), BPF_CORE_READ(rq, __sector), nr_bytes);
}

/*
 * Deliberately rejected by the verifier (a map value used without its NULL check). Autoload is
 * off; the tests switch it on to check that a verifier failure reports the verifier's log.
 */
SEC("?raw_tp/block_rq_complete")
int rejected_by_verifier(void *ctx)
{
	__u32 zero = 0;
	__u64 *count = bpf_map_lookup_elem(&scratch, &zero);

	*count += 1;
	return 0;
}
