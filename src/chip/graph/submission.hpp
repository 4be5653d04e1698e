// Graph submission image: what one replay (one outer GRAPH task) tells the
// scheduler, written by the host during orchestration and read on the device.
//   [GraphSubmission][ChipTensor x tensor_count][u64 x scalar_count]
// 64-byte aligned, no pointers into host memory: `definition_addr` and
// `heap_base` are device addresses.
#pragma once

#include <cstdint>

#include "taskring/base/align.hpp"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::graph {

inline constexpr uint64_t kSubmissionMagic = 0x31425553'48505247ull;  // "GRPHSUB1"

struct alignas(64) GraphSubmission {
  uint64_t magic;
  uint64_t full_key;
  uint64_t definition_hash;
  uint64_t definition_addr;  // device address of the Definition image (patched after graph_upload)
  uint64_t definition_bytes;
  uint64_t heap_base;   // device address of the replay's heap allocation
  uint64_t heap_bytes;  // required_heap + storage_bytes
  uint32_t tensor_count, scalar_count;
  uint32_t tensors_off, scalars_off;  // from the start of this record
  uint64_t total_bytes;
};

inline uint64_t submission_bytes(uint32_t tensors, uint32_t scalars) {
  uint64_t b = sizeof(GraphSubmission) + sizeof(ChipTensor) * tensors + 8ull * scalars;
  return align_up(b, 64);
}

}  // namespace taskring::graph
