// The moe workload's seeded inputs and its golden, shared by the workload
// (moe_workload.cpp) and by the MPI anchor that computes the same layer
// without taskring (bench/net/moe_mpi_anchor.cpp), so that both are checked
// by the same code against the same numbers.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "taskring/base/status.hpp"
#include "taskring/node/collectives.hpp"
#include "taskring/workloads/golden.hpp"

namespace taskring::workloads {

// One rank's inputs, of n ranks (El = E / n local experts): logits [T, E]
// FP32, x [T, D] BF16, w_gate / w_up [El·D, F] BF16, w_down [El·F, D] BF16.
struct MoeInputs {
  const float* logits = nullptr;
  const uint16_t *x = nullptr, *wg = nullptr, *wu = nullptr, *wd = nullptr;
};

// Writes rank `rank`'s inputs: a function of (shape, ranks, rank, seed)
// alone, so every process derives any rank's inputs without exchanging them.
// Each pointer must hold the element count of its MoeInputs field.
void fill_moe_inputs(const node::MoeShape& s, int ranks, int rank, uint64_t seed, float* logits, uint16_t* x,
                     uint16_t* wg, uint16_t* wu, uint16_t* wd);

// What one rank produced in a step (cap = s.cap(ranks)): topk_ids [T, K]
// INT32, recv_count [El] INT32, recv_meta [cap, 3] INT32 (src rank, token,
// k), recv_x [cap, D] BF16 (received rows by local expert, then source rank,
// then (token, k)), out [T, D] BF16.
struct MoeOutputs {
  const void *ids = nullptr, *recv_count = nullptr, *recv_meta = nullptr, *recv_x = nullptr, *out = nullptr;
};

// The layer's reference, a function of the inputs alone: routes from the
// gating logits (top-k, or round-robin over the global token index when
// balanced), every rank's received rows in the order above, the experts in
// double on the BF16 inputs, the combine.
struct MoeReference {
  std::vector<int32_t> ids;                               // expert per (rank, token, k)
  std::vector<std::vector<std::array<int32_t, 3>>> rows;  // per (rank, local expert): (src, token, k)
  std::vector<double> want;                               // combined output per (rank, token, hidden)
  double peak = 0;                                        // max |want|
};
// `inputs` holds every rank's inputs (inputs.size() ranks).
MoeReference moe_reference(const node::MoeShape& s, std::span<const MoeInputs> inputs, bool balanced);

// Routes and received rows of ranks [first, first + outs.size()), bit for
// bit: INTERNAL naming the rank, token / expert / row and the reference.
// `checked` (if given) is set to the received elements compared.
Status check_moe_routes(const node::MoeShape& s, const MoeReference& ref, std::span<const MoeInputs> inputs, int first,
                        std::span<const MoeOutputs> outs, uint64_t* checked = nullptr);

// The outputs of those ranks against the reference, within the BF16
// tolerance |got - ref| <= 2^-7·|ref| + 2^-7·max|ref| (docs/kernels.md §5),
// the peak taken over every rank (compare_to_reference's contract).
Status compare_moe_out(const node::MoeShape& s, const MoeReference& ref, int first, std::span<const MoeOutputs> outs,
                       GoldenStats* stats = nullptr);

// Both checks, as the moe workload runs them after every round; `stats`
// counts the received elements too.
Status check_moe_outputs(const node::MoeShape& s, const MoeReference& ref, std::span<const MoeInputs> inputs, int first,
                         std::span<const MoeOutputs> outs, GoldenStats* stats = nullptr);

}  // namespace taskring::workloads
