// The hbg task image: every task of a run, built on the host in one block with
// self-relative links, uploaded with one copy and read by the scheduler.
//
//   [ImageHeader][ImageTask x N][ChipTensor pool][u64 scalar pool]
//   [u32 fanin pool][u32 fanout pool][u32 roots]
//
// A GRAPH task carries the device address of its submission image
// (graph/submission.hpp) and no tensors.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "exec/predicate.hpp"
#include "graph/aligned_buffer.hpp"
#include "self_relative.hpp"
#include "taskring/base/expected.hpp"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::hbg {

inline constexpr uint64_t kImageMagic = 0x31474d49'48505247ull;  // "GRPHIMG1"

enum class TaskKind : uint8_t { kTask = 0, kGraph = 1 };

struct ImageTask {
  int32_t kernels[3];
  int16_t block_num;
  uint8_t shape;  // l2::TaskShape values
  TaskKind kind;
  int32_t tensor_count, scalar_count, fanin_count, fanout_count;
  SelfRelative<ChipTensor> tensors;
  SelfRelative<uint64_t> scalars;
  SelfRelative<uint32_t> fanin;
  SelfRelative<uint32_t> fanout;
  uint64_t submission_addr;  // kGraph: device address of the submission image
  exec::ResolvedPredicate predicate;
  bool sync_start;
};

struct ImageHeader {
  uint64_t magic;
  uint64_t total_bytes;
  uint32_t task_count, root_count;
  SelfRelative<ImageTask> tasks;
  SelfRelative<uint32_t> roots;
};

// One task as the orchestration produced it (indices into the pools below).
struct HostTask {
  int32_t kernels[3];
  int16_t block_num;
  uint8_t shape;
  TaskKind kind;
  uint32_t tensor_first, tensor_count, scalar_first, scalar_count, fanin_first, fanin_count;
  uint32_t submission = 0;  // kGraph: index of its pending submission
  exec::ResolvedPredicate predicate;
  bool sync_start = false;
};

struct HostBuild {
  std::vector<HostTask> tasks;
  std::deque<ChipTensor> tensors;  // stable: TaskOutputTensors point here
  std::vector<uint64_t> scalars;
  std::vector<uint32_t> fanin;  // producer task indices
  void clear() {
    tasks.clear();
    tensors.clear();
    scalars.clear();
    fanin.clear();
  }
};

// Lays out the image into `out`; `submission_addr(i)` resolves a GRAPH
// task's pending submission i. Fails when the image exceeds int32 reach.
Status build_task_image(const HostBuild& b, const std::vector<uint64_t>& submission_addrs, graph::AlignedBuffer* out);

}  // namespace taskring::hbg
