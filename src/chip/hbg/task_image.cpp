#include "task_image.hpp"
#include "taskring/base/align.hpp"

#include <cstring>

namespace taskring::hbg {

namespace {}  // namespace

Status build_task_image(const HostBuild& b, const std::vector<uint64_t>& submission_addrs, graph::AlignedBuffer* out) {
  const uint64_t n = b.tasks.size();
  std::vector<uint32_t> fanout_count(n, 0);
  uint64_t roots = 0;
  for (const HostTask& t : b.tasks) {
    if (t.fanin_count == 0) ++roots;
    for (uint32_t k = 0; k < t.fanin_count; ++k) fanout_count[b.fanin[t.fanin_first + k]]++;
  }
  uint64_t off = align_up(sizeof(ImageHeader), 64);
  const uint64_t off_tasks = off;
  off = align_up(off + sizeof(ImageTask) * n, 64);
  const uint64_t off_tensors = off;
  off = align_up(off + sizeof(ChipTensor) * b.tensors.size(), 64);
  const uint64_t off_scalars = off;
  off = align_up(off + 8 * b.scalars.size(), 64);
  const uint64_t off_fanin = off;
  off = align_up(off + 4 * b.fanin.size(), 64);
  const uint64_t off_fanout = off;
  off = align_up(off + 4 * b.fanin.size(), 64);
  const uint64_t off_roots = off;
  off = align_up(off + 4 * roots, 64);
  if (off > static_cast<uint64_t>(INT32_MAX)) {
    return resource_exhausted("hbg task image of " + std::to_string(off) +
                              " bytes exceeds the 2 GiB reach of self-relative links; split the run");
  }
  if (!out->assign_zero(off))
    return resource_exhausted("hbg: cannot allocate a task image of " + std::to_string(off) + " bytes");
  uint8_t* base = out->data();
  auto* h = reinterpret_cast<ImageHeader*>(base);
  auto* tasks = reinterpret_cast<ImageTask*>(base + off_tasks);
  auto* tensors = reinterpret_cast<ChipTensor*>(base + off_tensors);
  auto* scalars = reinterpret_cast<uint64_t*>(base + off_scalars);
  auto* fanin = reinterpret_cast<uint32_t*>(base + off_fanin);
  auto* fanout = reinterpret_cast<uint32_t*>(base + off_fanout);
  auto* root_list = reinterpret_cast<uint32_t*>(base + off_roots);
  for (size_t i = 0; i < b.tensors.size(); ++i) tensors[i] = b.tensors[i];
  if (!b.scalars.empty()) std::memcpy(scalars, b.scalars.data(), 8 * b.scalars.size());
  if (!b.fanin.empty()) std::memcpy(fanin, b.fanin.data(), 4 * b.fanin.size());
  std::vector<uint32_t> fanout_first(n, 0);
  uint32_t acc = 0;
  for (uint64_t i = 0; i < n; ++i) {
    fanout_first[i] = acc;
    acc += fanout_count[i];
  }
  std::vector<uint32_t> cursor = fanout_first;
  uint32_t r = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const HostTask& t = b.tasks[i];
    for (uint32_t k = 0; k < t.fanin_count; ++k)
      fanout[cursor[b.fanin[t.fanin_first + k]]++] = static_cast<uint32_t>(i);
    if (t.fanin_count == 0) root_list[r++] = static_cast<uint32_t>(i);
  }
  for (uint64_t i = 0; i < n; ++i) {
    const HostTask& t = b.tasks[i];
    ImageTask& d = tasks[i];
    std::memcpy(d.kernels, t.kernels, sizeof(d.kernels));
    d.block_num = t.block_num;
    d.predicate = t.predicate;
    d.sync_start = t.sync_start;
    d.shape = t.shape;
    d.kind = t.kind;
    d.tensor_count = static_cast<int32_t>(t.tensor_count);
    d.scalar_count = static_cast<int32_t>(t.scalar_count);
    d.fanin_count = static_cast<int32_t>(t.fanin_count);
    d.fanout_count = static_cast<int32_t>(fanout_count[i]);
    if (t.tensor_count) d.tensors.set(tensors + t.tensor_first);
    if (t.scalar_count) d.scalars.set(scalars + t.scalar_first);
    if (t.fanin_count) d.fanin.set(fanin + t.fanin_first);
    if (fanout_count[i]) d.fanout.set(fanout + fanout_first[i]);
    d.submission_addr = t.kind == TaskKind::kGraph ? submission_addrs[t.submission] : 0;
  }
  h->magic = kImageMagic;
  h->total_bytes = off;
  h->task_count = static_cast<uint32_t>(n);
  h->root_count = r;
  if (n) h->tasks.set(tasks);
  if (r) h->roots.set(root_list);
  return Status::Ok();
}

}  // namespace taskring::hbg
