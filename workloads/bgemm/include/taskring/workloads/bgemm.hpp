// Tiled batched matmul C[b] = A[b]·B[b] (docs/workloads.md#bgemm).
//
// A[b] is M x K, B[b] is K x N with M = grid_m·tile, N = grid_n·tile,
// K = grid_k·tile. One matmul task per (b, i, j, k) tile product: the first
// k-split writes the C tile, the others accumulate into it (INOUT), so the
// grid_k tasks of one C tile form a chain. Tasks per run:
// batch·grid_m·grid_n·grid_k. Golden: a double-precision host product.
// Parameters: batch, grid_m, grid_n, grid_k, tile, seed.
#pragma once

#include <memory>

#include "taskring/workloads/workload.hpp"

namespace taskring::workloads {

std::unique_ptr<Workload> make_bgemm_workload();

}  // namespace taskring::workloads
