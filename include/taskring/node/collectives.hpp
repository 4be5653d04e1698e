// Collectives and MoE expert parallelism as group tasks over a comm domain.
//
// Before init(), register the chip callables these submit:
//   int comm = *node.register_chip(comm_call_callable());   // any comm kernel
//   int moe  = *node.register_chip(moe_step_callable());    // a fused MoE step
// In an orchestration function, after allocate_domain():
//   submit_allreduce(o, comm, *d, ins, outs, AllreduceAlgo::kRing, "scratch");
// Every submit is one group task, member i (rank i) on d.chips()[i]; the
// tensors of rank i are HOST views in the node's shared heap, tagged as the
// kernel reads/writes them, so the usual dependencies apply. Shapes and
// dtypes are checked by the kernels (a kernel error names the rank's chip);
// the scratch buffer's size is checked here (INVALID_ARGUMENT naming it).
// docs/comm.md lists every kernel's tensors and scalars.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "taskring/chip/chip_worker.hpp"
#include "taskring/kernels/comm_kernels.hpp"
#include "taskring/node/comm_domain.hpp"
#include "taskring/node/orchestrator.hpp"

namespace taskring::node {

// "comm_call": runs the comm kernel whose id is its first scalar on one
// vector core, with the task's tensors (tags kept) and the other scalars.
ChipCallable comm_call_callable();
// "moe_step": top-k gating, dispatch, expert FFN and combine on one chip.
ChipCallable moe_step_callable();

// The generic building block: comm kernel `kernel_id` on every member; rank
// i gets rank_args[i]'s tensors and, as scalars, its device_ctx followed by
// rank_args[i]'s scalars.
Status submit_comm_group(Orchestrator& o, int comm_call, const CommDomain& d, int32_t kernel_id,
                         std::span<const ChipTaskArgs> rank_args);

Status submit_allreduce(Orchestrator& o, int comm_call, const CommDomain& d, std::span<const ChipTensor> in,
                        std::span<const ChipTensor> out, kernels::AllreduceAlgo algo, std::string_view scratch);
// out[i] = in[0] ++ in[1] ++ ... (every rank's in has the same size).
Status submit_allgather(Orchestrator& o, int comm_call, const CommDomain& d, std::span<const ChipTensor> in,
                        std::span<const ChipTensor> out, std::string_view scratch);
// out[i] = Σ_q in[q][i·m .. (i+1)·m).
Status submit_reduce_scatter(Orchestrator& o, int comm_call, const CommDomain& d, std::span<const ChipTensor> in,
                             std::span<const ChipTensor> out, std::string_view scratch);
// buf[i] = buf[root] for every rank i.
Status submit_broadcast(Orchestrator& o, int comm_call, const CommDomain& d, std::span<const ChipTensor> buf, int root,
                        std::string_view scratch);
// out[i][q·m ..] = in[q][i·m ..].
Status submit_all_to_all(Orchestrator& o, int comm_call, const CommDomain& d, std::span<const ChipTensor> in,
                         std::span<const ChipTensor> out, std::string_view scratch);

// ---- MoE expert parallelism ----

struct MoeShape {
  uint32_t tokens = 16;   // T per rank
  uint32_t hidden = 64;   // D
  uint32_t experts = 8;   // E in all, E/ranks per rank
  uint32_t topk = 2;      // K
  uint32_t ffn = 64;      // F
  uint32_t capacity = 0;  // received rows per rank; 0: ranks·T·K (never overflows)
  uint32_t cap(int ranks) const { return capacity ? capacity : static_cast<uint32_t>(ranks) * tokens * topk; }
  // Rows of dispatch's staging area in every window: T·K per source rank,
  // whatever the capacity.
  uint64_t staging_rows(int ranks) const { return uint64_t{static_cast<uint32_t>(ranks)} * tokens * topk; }
};

// The window buffers the MoE kernels use, to pass to allocate_domain.
std::vector<DomainBufferSpec> moe_window_buffers(const MoeShape& s, int ranks);
uint64_t moe_window_bytes(const MoeShape& s, int ranks);

// One rank's tensors (HOST views in the shared heap). Inputs: logits
// [T, E] FP32, x [T, D] BF16, w_gate/w_up [El·D, F] BF16, w_down [El·F, D]
// BF16. Outputs: topk_ids [T, K] INT32, topk_w [T, K] FP32, recv_x
// [cap, D] BF16, recv_w [cap] FP32, recv_meta [cap, 3] INT32 (src, token,
// k), recv_count [El] INT32, recv_y [cap, D] FP32, out [T, D] BF16.
struct MoeRankTensors {
  ChipTensor logits, x, w_gate, w_up, w_down;
  ChipTensor topk_ids, topk_w, recv_x, recv_w, recv_meta, recv_count, recv_y, out;
};

// One MoE layer step over `d` (allocated with moe_window_buffers): one
// group task running moe_step_callable on every member. `balanced`: the
// gating assigns experts round-robin over the global token index (every
// rank receives the same load) instead of the top-k logits.
Status submit_moe_step(Orchestrator& o, int moe_step, const CommDomain& d, std::span<const MoeRankTensors> ranks,
                       const MoeShape& s, bool balanced);

}  // namespace taskring::node
