// One MoE layer step written directly on MPI, one process per rank: the
// anchor a user would write instead of taskring's moe_step (issue 36 item
// 4). Same layer as `taskring bench moe`: top-k gating (taskring's
// topk_gating kernel), dispatch of the routed token rows with
// MPI_Alltoall (per-expert counts) + MPI_Alltoallv (the rows), the expert
// SwiGLU FFN (taskring's moe_expert_ffn kernel, the same OpenBLAS path),
// combine with a second MPI_Alltoallv back to the tokens' ranks and the
// weighted sum in FP32, written as BF16 as taskring's moe_combine does.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "taskring/base/status.hpp"
#include "taskring/node/collectives.hpp"
#include "taskring/workloads/moe_reference.hpp"

namespace taskring::bench {

// Phases of one step, seconds (MPI_Wtime differences) on this rank.
enum MoePhase { kGate, kCounts, kDispatch, kFfn, kCombine, kMoePhases };
inline constexpr const char* kMoePhaseNames[kMoePhases] = {"gate", "counts_alltoall", "dispatch_alltoallv", "ffn",
                                                           "combine_alltoallv"};

// One rank's inputs in the layouts of workloads::MoeInputs.
struct MoeMpiInputs {
  std::vector<float> logits;
  std::vector<uint16_t> x, wg, wu, wd;
  workloads::MoeInputs view() const { return {logits.data(), x.data(), wg.data(), wu.data(), wd.data()}; }
};

// Sizes `in` and fills it with rank `rank`'s inputs of `ranks` (the moe
// workload's, from `seed`). Precondition: experts % ranks == 0.
void fill_moe_mpi_inputs(MoeMpiInputs& in, const node::MoeShape& s, int ranks, int rank, uint64_t seed);

// One rank's buffers. Inputs and outputs are in the layouts of
// workloads::MoeInputs / MoeOutputs, so the workload's golden checks them;
// the rest is exchange scratch, sized once.
struct MoeMpiRank {
  node::MoeShape s;
  int ranks = 0, rank = 0;
  bool balanced = false;
  MoeMpiInputs in;
  // outputs of a step
  std::vector<int32_t> ids, recv_meta, recv_count;
  std::vector<float> w, recv_y;
  std::vector<uint16_t> recv_x, out;
  // scratch: per (owner, local expert) counts sent / (source, local expert) received
  std::vector<int> hist, recv_hist;
  std::vector<int> send_bytes, send_displ, recv_bytes, recv_displ, back_send_bytes, back_send_displ, back_recv_bytes,
      back_recv_displ;
  std::vector<char> send_rows, recv_rows;   // records (token, k, x row), by owner then local expert
  std::vector<uint32_t> sent_slot;          // token·K + k of each sent record, in send order
  std::vector<uint32_t> canonical;          // canonical recv_x row of each received record
  std::vector<uint32_t> next_row;           // per expert, while packing
  std::vector<float> back_send, back_recv;  // expert outputs, in received / sent record order
};

// Sizes every buffer and fills this rank's inputs from `seed` (the moe
// workload's inputs for rank `rank` of `ranks`). INVALID_ARGUMENT when the
// shape does not split (experts % ranks) or a message exceeds MPI's int counts.
Status init_moe_mpi_rank(MoeMpiRank& r, const node::MoeShape& s, int ranks, int rank, bool balanced, uint64_t seed);

// Sets every output to the bytes the moe workload's reset_output() writes,
// so a step that leaves one unwritten fails the golden.
void reset_moe_outputs(MoeMpiRank& r);

// One step over `comm` (every rank calls it). `phases` (if given) receives
// the seconds of each MoePhase on this rank. A kernel error is returned; an
// MPI error aborts the job (MPI_ERRORS_ARE_FATAL).
Status moe_mpi_step(MoeMpiRank& r, MPI_Comm comm, double* phases = nullptr);

}  // namespace taskring::bench
