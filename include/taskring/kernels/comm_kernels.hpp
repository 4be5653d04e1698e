// The comm kernels: collectives and MoE expert parallelism over a comm
// domain's windows (comm.hpp). They are not built-ins (a plain chip has no
// domain): a chip callable binds them under the ids below, which sit just
// below the built-in block so user kernels keep the small ids.
// docs/comm.md gives every kernel's tensors and scalars.
#pragma once

#include <cstdint>
#include <span>

#include "taskring/kernels/builtin_ids.hpp"
#include "taskring/kernels/kernel_abi.h"

namespace taskring::kernels::comm_id {

inline constexpr int32_t kCommBase = builtin_id::kBuiltinBase - 64;  // 832

inline constexpr int32_t kAllreduce = kCommBase + 0;
inline constexpr int32_t kAllgather = kCommBase + 1;
inline constexpr int32_t kReduceScatter = kCommBase + 2;
inline constexpr int32_t kBroadcast = kCommBase + 3;
inline constexpr int32_t kAllToAll = kCommBase + 4;
inline constexpr int32_t kMoeDispatch = kCommBase + 5;
inline constexpr int32_t kMoeExpertFfn = kCommBase + 6;
inline constexpr int32_t kMoeCombine = kCommBase + 7;
inline constexpr int32_t kCommProbe = kCommBase + 8;  // primitives exercised one by one (tests, bench)

}  // namespace taskring::kernels::comm_id

namespace taskring::kernels {

extern "C" {
void taskring_comm_allreduce(int64_t* args);
void taskring_comm_allgather(int64_t* args);
void taskring_comm_reduce_scatter(int64_t* args);
void taskring_comm_broadcast(int64_t* args);
void taskring_comm_all_to_all(int64_t* args);
void taskring_comm_moe_dispatch(int64_t* args);
void taskring_comm_moe_expert_ffn(int64_t* args);
void taskring_comm_moe_combine(int64_t* args);
void taskring_comm_probe(int64_t* args);
}

struct CommKernel {
  int32_t id;
  taskring_kernel_fn fn;
  const char* name;
};
// Every comm kernel, by id.
std::span<const CommKernel> comm_kernels();

// kOnePhase: every rank reads every rank's whole input (one meeting);
// kRing: reduce-scatter then allgather around the ring (2(n-1) hand-offs);
// kDirect: each rank reduces its 1/n chunk straight from every rank's
// window, then every rank gathers the reduced chunks, segment by segment
// through small slots (one meeting per segment, direct_allreduce_plan);
// kAuto: kOnePhase up to 8 KiB per rank, kDirect above (pick_allreduce).
// kOnePhase, kDirect and kAuto give the same bits (sums in rank order).
enum class AllreduceAlgo : uint32_t { kOnePhase = 0, kRing = 1, kDirect = 2, kAuto = 3 };
enum class CollectiveOp : uint32_t {
  kAllreduceOnePhase,
  kAllreduceRing,
  kAllgather,
  kReduceScatter,
  kBroadcast,
  kAllToAll,
  kAllreduceDirect
};

// What kAuto runs for `elems` FP32 elements per rank on `nranks` ranks.
AllreduceAlgo pick_allreduce(uint64_t elems, int nranks);

// A direct allreduce cuts each rank's chunk into `segs` segments and runs
// stage, reduce and gather segment by segment through two window slots of
// `slot_bytes` (one sub-slot of `sub_bytes`, the longest segment in FP32,
// per rank, at the start of each slot), so peers read what a rank staged or
// reduced from a cache. The
// segment length is kDirectHotBytes / (2·n²) (the slots of all n ranks,
// both parities, then take kDirectHotBytes), clamped to [kMin, kMax]
// DirectSegmentBytes; segs = chunk bytes (FP32) / that, at least 1 and at
// most kMaxDirectSegments (each segment takes one collective sequence
// number). A function of the shape only, so every rank counts the same
// meetings. Measured on 2 vCPUs (docs/comm.md): 2 ranks best at 128-512
// KiB segments, 8 ranks at 32 KiB.
inline constexpr uint64_t kDirectHotBytes = 4u << 20;
inline constexpr uint64_t kMinDirectSegmentBytes = 16u << 10;
inline constexpr uint64_t kMaxDirectSegmentBytes = 512u << 10;
inline constexpr uint64_t kMaxDirectSegments = 254;
// When the cross-core hand-off is slow (a KVM guest whose two vCPUs the
// host placed on different dies: ~4 GB/s against ~14 on one die), a peer
// reading lines still modified in another core's cache is slower than
// memory, and the direct allreduce runs in one segment instead (`whole`):
// measured on 2 ranks, 16 MiB, in that placement, 1.9 GB/s in 512 KiB
// segments, 4.4-4.8 in one; on one die 6.4-6.8 against 4.7. Every
// kDirectProbeEvery-th direct allreduce in segments (the first included),
// rank 0 times reading kDirectProbeBytes that rank 1 just copied into its
// slot and tells every rank whether it ran below kDirectSlowHandoffGbps
// (that read took 43-56 GB/s on one die, 11-24 on two); the ranks keep
// that until the next probe. The layout (2 slots of n sub-slots of the
// longest whole chunk) is the same either way, so the scratch does not
// depend on the verdict.
inline constexpr uint32_t kDirectProbeEvery = 8;
inline constexpr uint64_t kDirectProbeBytes = 256u << 10;
inline constexpr double kDirectSlowHandoffGbps = 30.0;
struct DirectAllreducePlan {
  uint64_t segs = 1;
  uint64_t sub_bytes = 0;   // the longest segment, FP32, 64-aligned
  uint64_t slot_bytes = 0;  // n sub-slots of the longest whole chunk: one parity's stride
};
DirectAllreducePlan direct_allreduce_plan(uint64_t elems, int nranks, bool whole = false);
uint64_t direct_allreduce_segments(uint64_t elems, int nranks);

// Window scratch bytes a collective needs at its scratch offset, for
// `in_elems` input elements per rank of `elem_size` bytes on `nranks` ranks
// (two parities, so back-to-back collectives never overwrite data a slower
// peer still reads).
uint64_t collective_scratch_bytes(CollectiveOp op, uint64_t in_elems, uint64_t elem_size, int nranks);

// comm_probe ops (scalar s1): what the probe kernel does on every rank.
enum class ProbeOp : uint32_t {
  kBarrier = 0,      // s2 = repetitions
  kRingNotify = 1,   // notify(add 1) every other rank at signal offset s2, wait for nranks-1
  kFailOnRank = 2,   // rank s2 fails at once; the others wait at a barrier
  kPutGet = 3,       // put a tile to the right neighbour, barrier, get it back from the left: tensors in, out
  kWaitForever = 4,  // wait for a signal nobody sends (deadline test)
  // Benchmarks (bench/comm): after a barrier, s2 repetitions; the rank's
  // elapsed nanoseconds go to its `times` tensor ([1] UINT64, the last one).
  kTimedBarrier = 5,    // tensors: times
  kTimedAllreduce = 6,  // tensors: in, out, times; s3 algorithm, s4 scratch offset
  // Fails naming the first non-zero byte unless this rank's whole window is
  // zero, then fills it with 0xFF (a later allocation must zero it again).
  kCheckZeroThenDirty = 7,
};

}  // namespace taskring::kernels
