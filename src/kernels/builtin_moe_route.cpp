// moe_route: per-expert token lists from top-k gating (local MoE dispatch).
//
// The routed half of a MoE block needs, for every expert this chip owns, the
// tokens that chose it and their gate weights, in a fixed-capacity layout so
// the expert FFN that follows has static shapes (a host-built graph cannot
// size a task by data the device produces). Padding slots name token 0 with
// gate 0, so gather_rows → FFN → scatter_add_rows over a whole row of slots
// adds exactly +0 for them.
#include <cstdint>
#include <cstring>
#include <vector>

#include "builtin_util.hpp"
#include "taskring/kernels/builtin.hpp"

namespace taskring::kernels {

using tile::View2D;

extern "C" void taskring_builtin_moe_route(int64_t* raw) {
  KernelArgs k(raw, "moe_route");
  if (!k.usable() || !k.expect_counts(4, 5, 0, 1)) return;
  View2D ids, w, rows, gates, counts;
  if (!k.view(0, "topk_ids", &ids) || !k.view(1, "topk_weights", &w) || !k.view(2, "rows", &rows) ||
      !k.view(3, "gates", &gates))
    return;
  if (!detail::check_dtype(k, ids, "topk_ids", DataType::INT32) ||
      !detail::check_dtype(k, w, "topk_weights", DataType::FP32) ||
      !detail::check_dtype(k, rows, "rows", DataType::INT32) || !detail::check_dtype(k, gates, "gates", DataType::FP32))
    return;
  if (!detail::check_same_shape(k, ids, "topk_ids", w, "topk_weights") ||
      !detail::check_same_shape(k, rows, "rows", gates, "gates"))
    return;
  const bool with_counts = k.tensor_count() == 5;
  if (with_counts) {
    if (!k.view(4, "counts", &counts) || !detail::check_dtype(k, counts, "counts", DataType::INT32)) return;
    if (counts.numel() != rows.rows || (counts.rows != 1 && counts.cols != 1))
      return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "counts is %lldx%lld, expected a vector of %lld",
                          static_cast<long long>(counts.rows), static_cast<long long>(counts.cols),
                          static_cast<long long>(rows.rows));
  }
  const int64_t tokens = ids.rows, topk = ids.cols, experts = rows.rows, capacity = rows.cols;
  const uint64_t base = k.scalar(0);
  if (base > static_cast<uint64_t>(INT32_MAX))
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "expert_base %llu exceeds INT32_MAX",
                        static_cast<unsigned long long>(base));
  // Validate every id and every expert's load before writing anything.
  auto id_at = [&](int64_t t, int64_t j) {
    int32_t x;
    std::memcpy(&x, ids.at(t, j), 4);
    return x;
  };
  auto local = [&](int32_t x) { return static_cast<int64_t>(x) - static_cast<int64_t>(base); };
  thread_local std::vector<int64_t> fill;
  fill.assign(static_cast<size_t>(experts), 0);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t j = 0; j < topk; ++j) {
      const int32_t x = id_at(t, j);
      if (x < 0)
        return (void)k.fail(TASKRING_KERNEL_ERR_OUT_OF_RANGE, "topk_ids[%lld][%lld] = %d is negative",
                            static_cast<long long>(t), static_cast<long long>(j), x);
      const int64_t e = local(x);
      if (e < 0 || e >= experts) continue;  // another chip's expert
      if (++fill[static_cast<size_t>(e)] > capacity)
        return (void)k.fail(TASKRING_KERNEL_ERR_OUT_OF_RANGE, "expert %d receives more than capacity %lld tokens", x,
                            static_cast<long long>(capacity));
    }
  fill.assign(static_cast<size_t>(experts), 0);
  const int32_t zero_row = 0;
  const float zero_gate = 0.0f;
  for (int64_t e = 0; e < experts; ++e)
    for (int64_t c = 0; c < capacity; ++c) {
      std::memcpy(rows.at(e, c), &zero_row, 4);
      std::memcpy(gates.at(e, c), &zero_gate, 4);
    }
  // Tokens in ascending order within each expert: the combine order is fixed.
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t j = 0; j < topk; ++j) {
      const int64_t e = local(id_at(t, j));
      if (e < 0 || e >= experts) continue;
      const int64_t slot = fill[static_cast<size_t>(e)]++;
      const int32_t row = static_cast<int32_t>(t);
      std::memcpy(rows.at(e, slot), &row, 4);
      std::memcpy(gates.at(e, slot), w.at(t, j), 4);
    }
  if (with_counts)
    for (int64_t e = 0; e < experts; ++e) {
      const int32_t n = static_cast<int32_t>(fill[static_cast<size_t>(e)]);
      std::memcpy(counts.rows == 1 ? counts.at(0, e) : counts.at(e, 0), &n, 4);
    }
}

}  // namespace taskring::kernels
