// Collectives over a comm domain (comm.hpp): allreduce (one-phase and ring),
// allgather, reduce_scatter, broadcast, all_to_all. One kernel per rank;
// every rank of the domain runs the same collective (a group task).
//
// Data moves through each rank's window scratch (two parities, chosen by the
// collective's sequence number: a rank can only start collective k+2 after
// every rank entered k+1, i.e. finished reading k's scratch). Reductions
// accumulate in FP32 and round to the output dtype once; the summation order
// is fixed (one-phase, reduce_scatter: ranks 0..n-1; ring: chunk c starts at
// rank c and goes around the ring), so every rank gets the same bits.
#include <algorithm>
#include <cstring>
#include <vector>

#include "builtin_util.hpp"
#include "taskring/base/align.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/kernels/comm.hpp"
#include "taskring/kernels/comm_kernels.hpp"

namespace taskring::kernels {

using tile::View2D;
namespace cm = comm;

namespace {

// A tensor read as a flat, contiguous run of elements.
struct Flat {
  char* data = nullptr;
  DataType dtype = DataType::FP32;
  uint64_t n = 0;
  size_t es = 4;
};

bool flat(const KernelArgs& k, int i, const char* role, bool need_float, Flat* f) {
  View2D v;
  if (!k.view(i, role, &v, need_float)) return false;
  if (need_float && !detail::check_float(k, v, role)) return false;
  const bool contiguous = (v.rows <= 1 || v.row_stride == v.cols) && (v.cols <= 1 || v.col_stride == 1);
  if (!contiguous)
    return k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "%s must be contiguous (row stride %lld for %lld cols)", role,
                  static_cast<long long>(v.row_stride), static_cast<long long>(v.cols));
  f->data = static_cast<char*>(v.data);
  f->dtype = v.dtype;
  f->n = static_cast<uint64_t>(v.numel());
  f->es = v.elem_size();
  return true;
}

void to_f32(const Flat& src, uint64_t first, uint64_t count, float* dst) {
  if (src.dtype == DataType::FP32) {
    std::memcpy(dst, src.data + first * 4, count * 4);
    return;
  }
  for (uint64_t i = 0; i < count; ++i) dst[i] = tile::read_as_float(src.data + (first + i) * src.es, src.dtype);
}

void from_f32(const float* src, uint64_t count, const Flat& dst, uint64_t first) {
  if (dst.dtype == DataType::FP32) {
    std::memcpy(dst.data + first * 4, src, count * 4);
    return;
  }
  for (uint64_t i = 0; i < count; ++i) tile::write_from_float(dst.data + (first + i) * dst.es, dst.dtype, src[i]);
}

// acc[i] = ((s[0][i] + s[1][i]) + s[2][i]) + ... for i < m: the rank order,
// in passes over up to four sources each, so acc is loaded and stored once
// per four sources instead of once per source (an 8-rank 4 KiB one-phase
// allreduce spent ~11-15 % of its samples in the one-source-per-pass loop).
void sum_in_order(float* __restrict acc, const float* const* s, int ns, uint64_t m) {
  int q = std::min(ns, 4);
  const float *a = s[0], *b = ns > 1 ? s[1] : nullptr, *c = ns > 2 ? s[2] : nullptr, *d = ns > 3 ? s[3] : nullptr;
  switch (q) {
    case 1: std::memcpy(acc, a, m * 4); break;
    case 2: for (uint64_t i = 0; i < m; ++i) acc[i] = a[i] + b[i]; break;
    case 3: for (uint64_t i = 0; i < m; ++i) acc[i] = (a[i] + b[i]) + c[i]; break;
    default: for (uint64_t i = 0; i < m; ++i) acc[i] = ((a[i] + b[i]) + c[i]) + d[i]; break;
  }
  for (; q < ns; q += 4) {
    a = s[q], b = q + 1 < ns ? s[q + 1] : nullptr, c = q + 2 < ns ? s[q + 2] : nullptr;
    d = q + 3 < ns ? s[q + 3] : nullptr;
    switch (std::min(ns - q, 4)) {
      case 1: for (uint64_t i = 0; i < m; ++i) acc[i] += a[i]; break;
      case 2: for (uint64_t i = 0; i < m; ++i) acc[i] = (acc[i] + a[i]) + b[i]; break;
      case 3: for (uint64_t i = 0; i < m; ++i) acc[i] = ((acc[i] + a[i]) + b[i]) + c[i]; break;
      default: for (uint64_t i = 0; i < m; ++i) acc[i] = (((acc[i] + a[i]) + b[i]) + c[i]) + d[i]; break;
    }
  }
}

bool scratch_fits(const KernelArgs& k, const cm::CommContext& c, uint64_t off, uint64_t bytes, const char* op) {
  // These collectives read peers' windows directly (one-node domains only).
  if (c.offnode != 0)
    return k.fail(TASKRING_KERNEL_ERR_UNSUPPORTED,
                  "%s: domain '%s' spans nodes; this collective reads peer windows "
                  "and runs on one-node domains only",
                  op, cm::domain_name(c));
  if (off % 64 != 0)
    return k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "%s: scratch offset %llu is not 64-byte aligned", op,
                  static_cast<unsigned long long>(off));
  return cm::check_window_range(k, c, off, bytes, "collective scratch");
}

uint64_t chunk_begin(uint64_t n, int nranks, int c) {
  return n * static_cast<uint64_t>(c) / static_cast<uint64_t>(nranks);
}

// One-phase: every rank stages its input (FP32) into its own scratch, then
// reads every rank's and sums in rank order.
bool allreduce_one_phase(const KernelArgs& k, const cm::CommContext& c, const Flat& in, const Flat& out, uint64_t off) {
  const uint32_t seq = cm::begin_collective(k, c, off, align_up(in.n * 4, 64));
  if (seq == 0) return false;
  const uint64_t slot = off + (seq & 1) * align_up(in.n * 4, 64);
  to_f32(in, 0, in.n, reinterpret_cast<float*>(cm::window_of(c, c.rank) + slot));
  for (int p = 0; p < c.nranks; ++p)
    if (p != c.rank) cm::post_flag(c, p, cm::token(seq, 1));
  if (!cm::wait_flags(k, c, nullptr, 0, cm::token(seq, 1), "allreduce: staged inputs")) return false;
  constexpr uint64_t kBlock = 4096;
  alignas(64) float acc[kBlock];
  const float* src[cm::kMaxRanks];
  for (uint64_t b = 0; b < in.n; b += kBlock) {
    const uint64_t m = std::min(kBlock, in.n - b);
    for (int q = 0; q < c.nranks; ++q) src[q] = reinterpret_cast<const float*>(cm::window_of(c, q) + slot) + b;
    sum_in_order(acc, src, c.nranks, m);
    from_f32(acc, m, out, b);
  }
  return true;
}

// A domain spanning nodes (L4): off-node windows cannot be read, so every
// rank puts its input (FP32) into slot `rank` of every rank's scratch
// (nranks slots per parity), then sums its own slots in rank order: the
// same order, hence the same bits, as one-phase.
bool allreduce_push(const KernelArgs& k, const cm::CommContext& c, const Flat& in, const Flat& out, uint64_t off) {
  const uint64_t slot_bytes = align_up(in.n * 4, 64), n = static_cast<uint64_t>(c.nranks);
  if (off % 64 != 0)
    return k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "allreduce: scratch offset %llu is not 64-byte aligned",
                  static_cast<unsigned long long>(off));
  if (!cm::check_window_range(k, c, off, 2 * n * slot_bytes, "allreduce scratch (2 x ranks x input, spanning nodes)"))
    return false;
  const uint32_t seq = cm::begin_collective(k, c, off, n * slot_bytes);
  if (seq == 0) return false;
  const uint64_t base = off + (seq & 1) * n * slot_bytes;
  std::vector<float> mine(in.n);
  to_f32(in, 0, in.n, mine.data());
  for (int p = 0; p < c.nranks; ++p)
    if (!cm::put(k, c, p, base + static_cast<uint64_t>(c.rank) * slot_bytes, mine.data(), in.n * 4)) return false;
  for (int p = 0; p < c.nranks; ++p)
    if (p != c.rank) cm::post_flag(c, p, cm::token(seq, 1));
  if (!cm::wait_flags(k, c, nullptr, 0, cm::token(seq, 1), "allreduce: pushed inputs")) return false;
  const char* w = cm::window_of(c, c.rank) + base;
  std::vector<float> acc(in.n);
  std::memcpy(acc.data(), w, in.n * 4);
  for (int q = 1; q < c.nranks; ++q) {
    const float* s = reinterpret_cast<const float*>(w + static_cast<uint64_t>(q) * slot_bytes);
    for (uint64_t i = 0; i < in.n; ++i) acc[i] += s[i];
  }
  from_f32(acc.data(), in.n, out, 0);
  return true;
}

// Ring: reduce-scatter (n-1 steps, each rank adds its left neighbour's
// partial of one chunk into its own accumulator A), then allgather (n-1
// steps, each rank copies one final chunk from its left neighbour's B).
// Tokens: 0 staged; s+1 after reduce-scatter step s; n final chunk in B;
// n+s+1 after allgather step s. A is never written after reduce-scatter
// and each chunk of B is written once, so no step overwrites data a
// neighbour may still read.
bool allreduce_ring(const KernelArgs& k, const cm::CommContext& c, const Flat& in, const Flat& out, uint64_t off) {
  const int n = c.nranks, r = c.rank, left = (r + n - 1) % n, right = (r + 1) % n;
  const uint32_t seq = cm::begin_collective(k, c, off, 2 * align_up(in.n * 4, 64));
  if (seq == 0) return false;
  const uint64_t a_off = off + (seq & 1) * 2 * align_up(in.n * 4, 64), b_off = a_off + align_up(in.n * 4, 64);
  float* A = reinterpret_cast<float*>(cm::window_of(c, r) + a_off);
  float* B = reinterpret_cast<float*>(cm::window_of(c, r) + b_off);
  const float* LA = reinterpret_cast<const float*>(cm::window_of(c, left) + a_off);
  const float* LB = reinterpret_cast<const float*>(cm::window_of(c, left) + b_off);
  to_f32(in, 0, in.n, A);
  cm::post_flag(c, right, cm::token(seq, 0));
  for (int s = 0; s < n - 1; ++s) {
    const int ch = (r - s - 1 + 2 * n) % n;
    if (!cm::wait_flags(k, c, &left, 1, cm::token(seq, static_cast<uint32_t>(s)), "ring allreduce: reduce-scatter"))
      return false;
    for (uint64_t i = chunk_begin(in.n, n, ch), e = chunk_begin(in.n, n, ch + 1); i < e; ++i) A[i] += LA[i];
    cm::post_flag(c, right, cm::token(seq, static_cast<uint32_t>(s + 1)));
  }
  const int mine = (r + 1) % n;
  const uint64_t m0 = chunk_begin(in.n, n, mine), m1 = chunk_begin(in.n, n, mine + 1);
  std::memcpy(B + m0, A + m0, (m1 - m0) * 4);
  cm::post_flag(c, right, cm::token(seq, static_cast<uint32_t>(n)));
  for (int s = 0; s < n - 1; ++s) {
    const int ch = (r - s + n) % n;
    if (!cm::wait_flags(k, c, &left, 1, cm::token(seq, static_cast<uint32_t>(n + s)), "ring allreduce: allgather"))
      return false;
    const uint64_t i0 = chunk_begin(in.n, n, ch), i1 = chunk_begin(in.n, n, ch + 1);
    std::memcpy(B + i0, LB + i0, (i1 - i0) * 4);
    cm::post_flag(c, right, cm::token(seq, static_cast<uint32_t>(n + s + 1)));
  }
  from_f32(B, in.n, out, 0);
  return true;
}

// Sums `count` elements from `first` on: rank q's part is `peer(q)` (FP32,
// `count` long) for q != c.rank and this rank's input for q == c.rank, in
// rank order 0..n-1; writes the sums to `reduced` and to `out` at `first`.
// Block by block, so the accumulator stays in L1 and each block of the
// input is read before the same block of `out` is written.
template <typename Peer>
void reduce_own_segment(const cm::CommContext& c, const Flat& in, const Flat& out, uint64_t first, uint64_t count,
                        Peer&& peer, float* reduced) {
  constexpr uint64_t kBlock = 2048;
  alignas(64) float acc[kBlock], own[kBlock];
  for (uint64_t b = 0; b < count; b += kBlock) {
    const uint64_t m = std::min(kBlock, count - b);
    const float* mine = own;
    if (in.dtype == DataType::FP32)
      mine = reinterpret_cast<const float*>(in.data) + first + b;
    else
      to_f32(in, first + b, m, own);
    const float* src[cm::kMaxRanks];
    for (int q = 0; q < c.nranks; ++q) src[q] = q == c.rank ? mine : peer(q) + b;
    sum_in_order(acc, src, c.nranks, m);
    std::memcpy(reduced + b, acc, m * 4);
    from_f32(acc, m, out, first + b);
  }
}

// Rank 0 times reading up to kDirectProbeBytes (at most `in_bytes`) that
// rank 1 copied from its input into its slot at window offset `slot` just
// before, and posts whether that ran below kDirectSlowHandoffGbps to every
// rank (step 2 of `seq`); every rank stores the verdict in `*whole`. Ranks
// other than 0 and 1 post step 1 without data (a full meeting, see below)
// and wait for the verdict. Needs two ranks or more.
bool probe_handoff(const KernelArgs& k, const cm::CommContext& c, const void* in, uint64_t in_bytes, uint64_t slot,
                   uint32_t seq, uint32_t* whole) {
  const uint64_t bytes = std::min({kDirectProbeBytes, c.win_size - slot, in_bytes}) & ~uint64_t{63};
  const int zero = 0, one = 1;
  // Every rank posts step 1 and rank 0 waits for all of them: the probe
  // takes a sequence number, and the segments after it write the parity
  // slot of the collective before it, so no rank may leave the probe before
  // every rank has left that collective (a rank that only waited for the
  // verdict could still be reading a peer's slot; TSan found it, and
  // CommDirect.BackToBack... saw a wrong sum once).
  if (c.rank != 0) {
    if (c.rank == 1) std::memcpy(cm::window_of(c, 1) + slot, in, bytes);  // as the segments stage
    cm::post_flag(c, 0, cm::token(seq, 1));
  } else {
    if (!cm::wait_flags(k, c, &one, 1, cm::token(seq, 1), "direct allreduce: hand-off probe")) return false;
    // An integer fold (vectorised; a float sum would time its add chain).
    const auto* p = reinterpret_cast<const uint64_t*>(cm::window_of(c, 1) + slot);
    const uint64_t t0 = mono_ns();
    uint64_t fold = 0;
    for (uint64_t i = 0; i < bytes / 8; ++i) fold ^= p[i];
    const uint64_t dt = std::max<uint64_t>(mono_ns() - t0, 1);
    const bool slow = static_cast<double>(bytes) / static_cast<double>(dt) < kDirectSlowHandoffGbps;
    volatile uint64_t keep = fold;  // the reads must happen
    (void)keep;
    cm::sync_of(c, 0).direct_verdict.store(slow ? 1 : 0, std::memory_order_relaxed);
    if (!cm::wait_flags(k, c, nullptr, 0, cm::token(seq, 1), "direct allreduce: hand-off probe")) return false;
    for (int q = 1; q < c.nranks; ++q) cm::post_flag(c, q, cm::token(seq, 2));
  }
  if (c.rank != 0 && !cm::wait_flags(k, c, &zero, 1, cm::token(seq, 2), "direct allreduce: hand-off verdict"))
    return false;
  *whole = cm::sync_of(c, 0).direct_verdict.load(std::memory_order_relaxed);
  return true;
}

// Direct: reduce-scatter + allgather through small window slots, segment
// by segment. Rank r owns chunk r of the input (chunk_begin); each chunk is
// cut into the same number of segments (direct_allreduce_plan), and for
// segment j every rank
//   stages its part of segment j of every other chunk q (FP32) into
//     sub-slot q of its window slot,
//   reduces segment j of its own chunk: sums rank 0..n-1's parts (its own
//     straight from its input, the peers' from their sub-slots r; the
//     one-phase order, so the same bits) into its sub-slot r and its output,
//   gathers the peers' reduced segments j from their sub-slots q into its
//     output.
// The slots are small (n sub-slots of one segment) and reused every other
// segment, so what a rank stages or reduces is read by its peers from a
// cache, and the only memory traffic is reading the input and writing the
// output once (in one segment the slots are as large as the input and go
// through memory too: the better choice only when the cores' hand-off is
// slower than memory, which probe_handoff() detects, comm_kernels.hpp). One meeting per segment: its flag says "reduced
// segment j and staged segment j+1", and the next stage overlaps the wait.
// Segment j runs under sequence number seq0 + j and uses that number's
// parity slot, so the rule that keeps back-to-back collectives apart holds
// segment by segment: nothing is written into a parity slot before every
// rank posted the meeting after the one whose data it held. `in` and `out`
// may be one tensor: a block of the own chunk is read before it is written,
// and segment j of the other chunks is staged before it is gathered.
bool allreduce_direct(const KernelArgs& k, const cm::CommContext& c, const Flat& in, const Flat& out, uint64_t off) {
  const int n = c.nranks, r = c.rank;
  DirectAllreducePlan plan = direct_allreduce_plan(in.n, n);
  uint32_t seq = cm::begin_collective(k, c, off, plan.slot_bytes);
  if (seq == 0) return false;
  if (plan.segs > 1 && n > 1) {
    cm::SyncBlock& me = cm::sync_of(c, r);
    if (me.direct_calls++ % kDirectProbeEvery == 0) {
      const uint64_t probe_bytes = std::min(in.n * in.es, plan.slot_bytes);  // within this parity's slot
      if (!probe_handoff(k, c, in.data, probe_bytes, off + (seq & 1) * plan.slot_bytes, seq, &me.direct_whole))
        return false;
      seq = cm::begin_collective(c);  // the probe took `seq` and its parity slot
    }
    if (me.direct_whole != 0) plan = direct_allreduce_plan(in.n, n, true);
  }
  // Sub-slot q of rank w's slot for sequence s (as mapped in this process).
  const auto sub_slot = [&](int w, uint32_t s, int q) {
    return reinterpret_cast<float*>(cm::window_of(c, w) + off + (s & 1) * plan.slot_bytes +
                                    static_cast<uint64_t>(q) * plan.sub_bytes);
  };
  // Segment j of chunk q: [seg(q, j), seg(q, j + 1)).
  const auto seg = [&](int q, uint64_t j) {
    const uint64_t b = chunk_begin(in.n, n, q), e = chunk_begin(in.n, n, q + 1);
    return b + (e - b) * j / plan.segs;
  };
  const auto stage = [&](uint64_t j, uint32_t s) {
    for (int q = 0; q < n; ++q)
      if (q != r) to_f32(in, seg(q, j), seg(q, j + 1) - seg(q, j), sub_slot(r, s, q));
  };
  const auto meet = [&](uint32_t tok) {
    for (int p = 0; p < n; ++p)
      if (p != r) cm::post_flag(c, p, tok);
    return cm::wait_flags(k, c, nullptr, 0, tok, "direct allreduce: segment");
  };
  stage(0, seq);
  if (!meet(cm::token(seq, 1))) return false;
  for (uint64_t j = 0; j < plan.segs; ++j) {
    reduce_own_segment(c, in, out, seg(r, j), seg(r, j + 1) - seg(r, j), [&](int q) { return sub_slot(q, seq, r); },
                       sub_slot(r, seq, r));
    uint32_t tok = cm::token(seq, 2), next = seq;
    if (j + 1 < plan.segs) {
      next = cm::begin_collective(c);
      stage(j + 1, next);
      tok = cm::token(next, 1);
    }
    if (!meet(tok)) return false;
    for (int q0 = 1; q0 < n; ++q0) {
      const int q = (r + q0) % n;  // start at a different owner on every rank
      from_f32(sub_slot(q, seq, q), seg(q, j + 1) - seg(q, j), out, seg(q, j));
    }
    seq = next;
  }
  return true;
}

// Stages `bytes` of `src` into this rank's parity slot and waits until every
// rank staged; returns the slot offset (UINT64_MAX after a failure).
uint64_t stage_all(const KernelArgs& k, const cm::CommContext& c, const void* src, uint64_t bytes, uint64_t off,
                   const char* what) {
  const uint32_t seq = cm::begin_collective(k, c, off, align_up(bytes, 64));
  if (seq == 0) return UINT64_MAX;
  const uint64_t slot = off + (seq & 1) * align_up(bytes, 64);
  std::memcpy(cm::window_of(c, c.rank) + slot, src, bytes);
  for (int p = 0; p < c.nranks; ++p)
    if (p != c.rank) cm::post_flag(c, p, cm::token(seq, 1));
  if (!cm::wait_flags(k, c, nullptr, 0, cm::token(seq, 1), what)) return UINT64_MAX;
  return slot;
}

}  // namespace

DirectAllreducePlan direct_allreduce_plan(uint64_t elems, int nranks, bool whole) {
  const uint64_t n = static_cast<uint64_t>(std::max(nranks, 1));
  const uint64_t chunk = (elems + n - 1) / n;  // the longest chunk, in elements
  DirectAllreducePlan p;
  // Two parity slots of n sub-slots on each of n ranks stay hot: 2·n²·segment.
  const uint64_t seg_bytes =
      std::clamp<uint64_t>(kDirectHotBytes / (2 * n * n), kMinDirectSegmentBytes, kMaxDirectSegmentBytes);
  p.segs = whole ? 1 : std::clamp<uint64_t>(chunk * 4 / seg_bytes, 1, kMaxDirectSegments);
  p.sub_bytes = align_up((chunk + p.segs - 1) / p.segs * 4, 64);
  p.slot_bytes = n * align_up(chunk * 4, 64);
  return p;
}

uint64_t direct_allreduce_segments(uint64_t elems, int nranks) { return direct_allreduce_plan(elems, nranks).segs; }

uint64_t collective_scratch_bytes(CollectiveOp op, uint64_t in_elems, uint64_t elem_size, int nranks) {
  switch (op) {
    case CollectiveOp::kAllreduceOnePhase: return 2 * align_up(in_elems * 4, 64);
    case CollectiveOp::kAllreduceDirect: return 2 * direct_allreduce_plan(in_elems, nranks).slot_bytes;
    case CollectiveOp::kAllreduceRing: return 4 * align_up(in_elems * 4, 64);
    case CollectiveOp::kReduceScatter: return 2 * align_up(in_elems * 4, 64);
    case CollectiveOp::kAllgather:
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kAllToAll: return 2 * align_up(in_elems * elem_size, 64);
  }
  return 0;
}

AllreduceAlgo pick_allreduce(uint64_t elems, int nranks) {
  // Memory traffic per rank, N = the input: one-phase (n+3)·N in one
  // meeting, direct ~4·N in two. The second meeting costs less than the
  // traffic it saves from 16 KiB on, also when ranks outnumber the cores
  // and a meeting is a park and wake of every rank. bench_comm on 2 vCPUs
  // (Intel guest, stop 17, three runs): 4 and 8 ranks even at 8 KiB, direct
  // ahead at 16 KiB (1.6-2.1 vs 1.2-1.5 GB/s at 4 ranks, 0.79-0.95 vs
  // 0.46-0.64 at 8) and at 64 KiB (3.1-3.5 vs 1.6-1.9; 1.6-1.9 vs 0.49-0.91),
  // one-phase ahead at 4 KiB. The AMD guest of stops 12-13 had the same order
  // at 4 and 64 KiB on 4 and 8 ranks, and 2 ranks' crossover at 8-16 KiB.
  (void)nranks;  // the same crossover on 2, 4 and 8 ranks
  return elems * 4 <= (8u << 10) ? AllreduceAlgo::kOnePhase : AllreduceAlgo::kDirect;
}

// in [n] float, out [n] float; s0 ctx, s1 algo (AllreduceAlgo), s2 scratch offset.
extern "C" void taskring_comm_allreduce(int64_t* raw) {
  KernelArgs k(raw, "allreduce");
  if (!k.usable() || !k.expect_counts(2, 2, 3, 3)) return;
  const cm::CommContext* c = cm::context_arg(k, 0);
  Flat in, out;
  if (c == nullptr || !flat(k, 0, "in", true, &in) || !flat(k, 1, "out", true, &out)) return;
  if (in.n != out.n)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "out has %llu elements, in has %llu",
                        static_cast<unsigned long long>(out.n), static_cast<unsigned long long>(in.n));
  const uint64_t raw_algo = k.scalar(1), off = k.scalar(2);
  if (raw_algo > static_cast<uint64_t>(AllreduceAlgo::kAuto))
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "algorithm %llu: 0 one-phase, 1 ring, 2 direct, 3 auto",
                        static_cast<unsigned long long>(raw_algo));
  if (c->offnode != 0) return (void)allreduce_push(k, *c, in, out, off);  // spans nodes (any algorithm)
  auto algo = static_cast<AllreduceAlgo>(raw_algo);
  if (algo == AllreduceAlgo::kAuto) algo = pick_allreduce(in.n, c->nranks);
  const auto op = algo == AllreduceAlgo::kOnePhase ? CollectiveOp::kAllreduceOnePhase
                  : algo == AllreduceAlgo::kRing   ? CollectiveOp::kAllreduceRing
                                                   : CollectiveOp::kAllreduceDirect;
  if (!scratch_fits(k, *c, off, collective_scratch_bytes(op, in.n, 4, c->nranks), "allreduce")) return;
  if (algo == AllreduceAlgo::kOnePhase)
    (void)allreduce_one_phase(k, *c, in, out, off);
  else if (algo == AllreduceAlgo::kRing)
    (void)allreduce_ring(k, *c, in, out, off);
  else
    (void)allreduce_direct(k, *c, in, out, off);
}

// in [m] any dtype, out [nranks·m] same dtype; s0 ctx, s1 scratch offset.
extern "C" void taskring_comm_allgather(int64_t* raw) {
  KernelArgs k(raw, "allgather");
  if (!k.usable() || !k.expect_counts(2, 2, 2, 2)) return;
  const cm::CommContext* c = cm::context_arg(k, 0);
  Flat in, out;
  if (c == nullptr || !flat(k, 0, "in", false, &in) || !flat(k, 1, "out", false, &out)) return;
  if (in.dtype != out.dtype || out.n != in.n * static_cast<uint64_t>(c->nranks))
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT,
                        "out must be %d x in (%llu elements, same dtype), got %llu", c->nranks,
                        static_cast<unsigned long long>(in.n), static_cast<unsigned long long>(out.n));
  const uint64_t bytes = in.n * in.es, off = k.scalar(1);
  if (!scratch_fits(k, *c, off, collective_scratch_bytes(CollectiveOp::kAllgather, in.n, in.es, c->nranks),
                    "allgather"))
    return;
  const uint64_t slot = stage_all(k, *c, in.data, bytes, off, "allgather: staged inputs");
  if (slot == UINT64_MAX) return;
  for (int q = 0; q < c->nranks; ++q) std::memcpy(out.data + q * bytes, cm::window_of(*c, q) + slot, bytes);
}

// in [nranks·m] float, out [m] float: out = Σ_q in_q[rank·m ..]; s0 ctx, s1 scratch offset.
extern "C" void taskring_comm_reduce_scatter(int64_t* raw) {
  KernelArgs k(raw, "reduce_scatter");
  if (!k.usable() || !k.expect_counts(2, 2, 2, 2)) return;
  const cm::CommContext* c = cm::context_arg(k, 0);
  Flat in, out;
  if (c == nullptr || !flat(k, 0, "in", true, &in) || !flat(k, 1, "out", true, &out)) return;
  if (in.n != out.n * static_cast<uint64_t>(c->nranks))
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "in must hold %d x out (%llu) elements, got %llu",
                        c->nranks, static_cast<unsigned long long>(out.n), static_cast<unsigned long long>(in.n));
  const uint64_t off = k.scalar(1);
  if (!scratch_fits(k, *c, off, collective_scratch_bytes(CollectiveOp::kReduceScatter, in.n, 4, c->nranks),
                    "reduce_scatter"))
    return;
  const uint32_t seq = cm::begin_collective(k, *c, off, align_up(in.n * 4, 64));
  if (seq == 0) return;
  const uint64_t slot = off + (seq & 1) * align_up(in.n * 4, 64);
  to_f32(in, 0, in.n, reinterpret_cast<float*>(cm::window_of(*c, c->rank) + slot));
  for (int p = 0; p < c->nranks; ++p)
    if (p != c->rank) cm::post_flag(*c, p, cm::token(seq, 1));
  if (!cm::wait_flags(k, *c, nullptr, 0, cm::token(seq, 1), "reduce_scatter: staged inputs")) return;
  const uint64_t first = out.n * static_cast<uint64_t>(c->rank);
  std::vector<float> acc(out.n);
  std::memcpy(acc.data(), cm::window_of(*c, 0) + slot + first * 4, out.n * 4);
  for (int q = 1; q < c->nranks; ++q) {
    const float* s = reinterpret_cast<const float*>(cm::window_of(*c, q) + slot) + first;
    for (uint64_t i = 0; i < out.n; ++i) acc[i] += s[i];
  }
  from_f32(acc.data(), out.n, out, 0);
}

// buf [m] any dtype (INOUT: the root's is sent, the others' overwritten);
// s0 ctx, s1 root rank, s2 scratch offset.
extern "C" void taskring_comm_broadcast(int64_t* raw) {
  KernelArgs k(raw, "broadcast");
  if (!k.usable() || !k.expect_counts(1, 1, 3, 3)) return;
  const cm::CommContext* c = cm::context_arg(k, 0);
  Flat buf;
  if (c == nullptr || !flat(k, 0, "buf", false, &buf)) return;
  const uint64_t root = k.scalar(1), off = k.scalar(2);
  if (root >= static_cast<uint64_t>(c->nranks))
    return (void)k.fail(TASKRING_KERNEL_ERR_OUT_OF_RANGE, "root %llu is not a rank in [0, %d)",
                        static_cast<unsigned long long>(root), c->nranks);
  const uint64_t bytes = buf.n * buf.es;
  if (!scratch_fits(k, *c, off, collective_scratch_bytes(CollectiveOp::kBroadcast, buf.n, buf.es, c->nranks),
                    "broadcast"))
    return;
  const uint32_t seq = cm::begin_collective(k, *c, off, align_up(bytes, 64));
  if (seq == 0) return;
  const uint64_t slot = off + (seq & 1) * align_up(bytes, 64);
  const int rt = static_cast<int>(root);
  if (c->rank == rt) {
    std::memcpy(cm::window_of(*c, rt) + slot, buf.data, bytes);
    for (int p = 0; p < c->nranks; ++p)
      if (p != rt) cm::post_flag(*c, p, cm::token(seq, 1));
    // The root leaves once every rank copied, so its slot outlives the reads.
    (void)cm::wait_flags(k, *c, nullptr, 0, cm::token(seq, 2), "broadcast: copies done");
    return;
  }
  if (!cm::wait_flags(k, *c, &rt, 1, cm::token(seq, 1), "broadcast: root's data")) return;
  std::memcpy(buf.data, cm::window_of(*c, rt) + slot, bytes);
  cm::post_flag(*c, rt, cm::token(seq, 2));
}

// in [nranks·m], out [nranks·m] any dtype: out[q·m ..] = in_q[rank·m ..];
// s0 ctx, s1 scratch offset.
extern "C" void taskring_comm_all_to_all(int64_t* raw) {
  KernelArgs k(raw, "all_to_all");
  if (!k.usable() || !k.expect_counts(2, 2, 2, 2)) return;
  const cm::CommContext* c = cm::context_arg(k, 0);
  Flat in, out;
  if (c == nullptr || !flat(k, 0, "in", false, &in) || !flat(k, 1, "out", false, &out)) return;
  const uint64_t n = static_cast<uint64_t>(c->nranks);
  if (in.dtype != out.dtype || in.n != out.n || in.n % n != 0)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT,
                        "in and out must have the same dtype and element count, a multiple of %d (got %llu, %llu)",
                        c->nranks, static_cast<unsigned long long>(in.n), static_cast<unsigned long long>(out.n));
  const uint64_t off = k.scalar(1), block = in.n / n * in.es;
  if (!scratch_fits(k, *c, off, collective_scratch_bytes(CollectiveOp::kAllToAll, in.n, in.es, c->nranks),
                    "all_to_all"))
    return;
  const uint64_t slot = stage_all(k, *c, in.data, in.n * in.es, off, "all_to_all: staged inputs");
  if (slot == UINT64_MAX) return;
  for (int q = 0; q < c->nranks; ++q)
    std::memcpy(out.data + q * block, cm::window_of(*c, q) + slot + static_cast<uint64_t>(c->rank) * block, block);
}

}  // namespace taskring::kernels
