// The checksum kernel of the differential and semantics tests, shared by the
// runtime (as a kernel) and the sequential interpreter (called directly on
// host memory), so both compute exactly the same function.
//
// Scalars: s0 seed, s1 mask of written tensors, s2 mask of read tensors,
// s3 mask of written tensors whose old value feeds the new one (INOUT, or an
// OUTPUT with an initial value), s4 the task's active kernel slots (bit 0
// AIC, 1 AIV0, 2 AIV1).
//
// S = mix over every element of every read tensor (argument order, view
// order). Each written tensor j gets, at its k-th view element,
//   H(S, seed, j, k, old-or-0)
// but only for the k that belong to this participant: participants are
// (block, active slot) pairs, k % (block_num * slots) == block_idx * slots + rank.
#pragma once

#include <cstdint>
#include <cstring>

#include "taskring/tensor/task_args.hpp"
#include "test_kernels.hpp"

namespace taskring::testing {

inline uint32_t mix32(uint32_t h, uint32_t v) {
  h ^= v + 0x9E3779B9u + (h << 6) + (h >> 2);
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  return h;
}

// Element `off` of `t` as raw bits, at the tensor's element size (1, 2 or 4
// bytes; wider types keep their low 4 bytes), so that 1- and 2-byte tensors
// are read and written at their true byte ranges.
inline uint32_t load_bits(const ChipTensor& t, uint64_t off) {
  const uint64_t es = t.elem_size();
  const auto* p = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(t.buffer.addr)) + off * es;
  uint32_t v = 0;
  std::memcpy(&v, p, es < 4 ? es : 4);
  return v;
}
inline void store_bits(const ChipTensor& t, uint64_t off, uint32_t v) {
  const uint64_t es = t.elem_size();
  auto* p = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(t.buffer.addr)) + off * es;
  std::memcpy(p, &v, es < 4 ? es : 4);
}

// One participant of a checksum task. `part` in [0, nparts).
inline void checksum_apply(const ChipTensor* const* tensors, int nt, const uint64_t* scalars, int part, int nparts) {
  uint32_t seed = static_cast<uint32_t>(scalars[0]);
  uint32_t wmask = static_cast<uint32_t>(scalars[1]);
  uint32_t rmask = static_cast<uint32_t>(scalars[2]);
  uint32_t omask = static_cast<uint32_t>(scalars[3]);
  uint32_t s = mix32(0x1234567u, seed);
  for (int i = 0; i < nt; ++i) {
    if (!((rmask >> i) & 1)) continue;
    const ChipTensor& t = *tensors[i];
    for_each_offset(t, [&](uint64_t, uint64_t off) { s = mix32(s, load_bits(t, off)); });
    s = mix32(s, static_cast<uint32_t>(i));
  }
  for (int i = 0; i < nt; ++i) {
    if (!((wmask >> i) & 1)) continue;
    const ChipTensor& t = *tensors[i];
    bool use_old = (omask >> i) & 1;
    for_each_offset(t, [&](uint64_t k, uint64_t off) {
      if (static_cast<int>(k % static_cast<uint64_t>(nparts)) != part) return;
      uint32_t old = use_old ? load_bits(t, off) : 0u;
      uint32_t h = mix32(s, seed);
      h = mix32(h, static_cast<uint32_t>(i));
      h = mix32(h, static_cast<uint32_t>(k));
      store_bits(t, off, mix32(h, old));
    });
  }
}

// Kernel form: participant from the launch context.
extern "C" inline void test_checksum(int64_t* args) {
  KernelLocalContext* ctx = taskring_kernel_local(args);
  int nt = ctx->tensor_count;
  if (ctx->scalar_count < 5) {
    taskring_kernel_fail(ctx, TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "test_checksum: needs 5 scalars");
    return;
  }
  const ChipTensor* tensors[CORE_MAX_TENSOR_ARGS];
  for (int i = 0; i < nt; ++i) tensors[i] = arg_tensor(args, i);
  uint64_t scalars[5];
  for (int j = 0; j < 5; ++j) scalars[j] = static_cast<uint64_t>(args[nt + j]);
  uint32_t slots = static_cast<uint32_t>(scalars[4]);
  int slot = ctx->core_type == TASKRING_CORE_AIC ? 0 : (ctx->sub_block_id == 0 ? 1 : 2);
  int nslots = __builtin_popcount(slots);
  int rank = __builtin_popcount(slots & ((1u << slot) - 1));
  if (nslots == 0 || !((slots >> slot) & 1)) {
    taskring_kernel_fail(ctx, TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "test_checksum: ran on a slot not in s4");
    return;
  }
  checksum_apply(tensors, nt, scalars, ctx->block_idx * nslots + rank, ctx->block_num * nslots);
}

}  // namespace taskring::testing
