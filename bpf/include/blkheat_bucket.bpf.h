/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The latency bucket of a nanosecond count, by table instead of search: the knobs the agent sets
 * (the schema's bounds and a table over them) and bh_bucket_of(). Shared by blkheat.bpf.c and the
 * test object that checks it against the agent's own bucketOfNs (bpf/test/bucket_test.bpf.c).
 *
 * Why a table: a binary search over the bounds takes 7 (8 at schema 3) compares whose outcomes
 * are as random as the latencies' low bits, so most of them mispredict; two searches per I/O
 * (device and queue time) cost about 100 ns here, a fifth of the completion program. The table
 * splits every power of two into 2^BH_SPLIT_BITS equal parts and names, for each part, the bucket
 * of its lowest value; the agent checks that no part holds more than one bound (each bucket is
 * wider than a part: 9 % of its lower end at schema 3, against 3 %), so one compare settles it.
 * Nothing here branches on the latency. bh_msb() also gives the I/O size class (size_log2).
 */
#ifndef BLKHEAT_BUCKET_BPF_H
#define BLKHEAT_BUCKET_BPF_H

/* Parts per power of two: 2^BH_SPLIT_BITS (the agent reads it as bucket_first's size). */
#define BH_SPLIT_BITS 5
#define BH_BUCKET_TABLE_SIZE (64 << BH_SPLIT_BITS)

/* Upper bounds (ns, inclusive) of the regular buckets, ascending, padded with 2^63 - 1 (above
 * any latency, and still a positive difference: see bh_bucket_of). */
const volatile __u64 bounds_ns[BH_MAX_BOUNDS] = {};
/* bucket_first[(o << BH_SPLIT_BITS) | m]: the bucket of the lowest value whose highest set bit is
 * o and whose next BH_SPLIT_BITS bits are m. */
const volatile __u8 bucket_first[BH_BUCKET_TABLE_SIZE] = {};

/* 1 when v > limit, else 0, for v < 2^63: the sign of limit - v, without a branch. */
#define BH_ABOVE(v, limit) (((__u64)(limit) - (v)) >> 63)

/* One halving step of bh_msb: when v has a bit at `bits` or above, shift it down by `bits`. */
#define BH_MSB_STEP(bits)                               \
	t = BH_ABOVE(v, (1ULL << (bits)) - 1) * (bits); \
	v >>= t;                                        \
	o += t;

/* floor(log2(x)) for x below 2^63 (0 for 0 and 1), by halving the width without branches. */
static __always_inline __u64 bh_msb(__u64 x)
{
	__u64 v = x | 1, o = 0, t;
	BH_MSB_STEP(32)
	BH_MSB_STEP(16)
	BH_MSB_STEP(8)
	BH_MSB_STEP(4)
	BH_MSB_STEP(2)
	BH_MSB_STEP(1)
	return o & 63;
}

/* Dense bucket of a latency below 2^63 ns: the smallest k with ns <= bounds_ns[k], or the number
 * of bounds (overflow) above them all. */
static __always_inline __u32 bh_bucket_of(__u64 ns)
{
	__u64 o = bh_msb(ns);
	/* The BH_SPLIT_BITS bits below the highest set one (zeros shifted in below small values). */
	__u64 part = ((ns << (63 - o)) >> (63 - BH_SPLIT_BITS)) & ((1u << BH_SPLIT_BITS) - 1);
	__u32 first = bucket_first[((o << BH_SPLIT_BITS) | part) & (BH_BUCKET_TABLE_SIZE - 1)];
	__u64 bound = bounds_ns[first & (BH_MAX_BOUNDS - 1)];
	__u32 k = first + (__u32)BH_ABOVE(ns, bound);
	return k < BH_NR_BUCKETS ? k : BH_NR_BUCKETS - 1;
}

#endif
