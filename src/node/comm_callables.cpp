// The chip callables behind collectives.hpp, and the submit helpers.
#include <array>
#include <span>
#include <string>

#include "pto_orchestration_api.h"
#include "taskring/base/align.hpp"
#include "taskring/kernels/builtin_ids.hpp"
#include "taskring/node/collectives.hpp"

namespace taskring::node {

namespace {

using kernels::CollectiveOp;
namespace cid = kernels::comm_id;

// A chip callable with every comm kernel bound under its id.
ChipCallable with_comm_kernels(const char* name, OrchestrationEntry entry, OrchestrationConfigFn config) {
  ChipCallable c;
  c.name = name;
  c.entry = entry;
  c.config = config;
  for (const kernels::CommKernel& k : kernels::comm_kernels())
    c.kernels.push_back(KernelBinding{k.id, k.fn, "", k.name});
  return c;
}

// Scalar 0: the comm kernel; the rest and every tensor pass through.
void comm_call_entry(const ChipTaskArgs& args) {
  CoreTaskArgs t;
  for (int i = 0; i < args.tensor_count(); ++i) t.add_tensor(*args.tensor(i), args.tag(i));
  for (int j = 1; j < args.scalar_count(); ++j) t.add_scalar(args.scalar(j));
  rt_submit_aiv_task(static_cast<int32_t>(args.scalar(0)), t);
}
PTO2OrchestrationConfig comm_call_config(const ChipTaskArgs&) { return PTO2OrchestrationConfig{1}; }

enum MoeTensor {
  kLogits,
  kX,
  kWGate,
  kWUp,
  kWDown,
  kIds,
  kW,
  kRecvX,
  kRecvW,
  kRecvMeta,
  kRecvCount,
  kRecvY,
  kOut,
  kMoeTensors
};
enum MoeScalar {
  kCtx,
  kExperts,
  kMode,
  kTokenBase,
  kCountsOff,
  kRecvXOff,
  kRecvWOff,
  kRecvMetaOff,
  kRetOff,
  kMoeScalars
};

void moe_step_entry(const ChipTaskArgs& a) {
  auto T = [&](MoeTensor i) -> const ChipTensor& { return *a.tensor(i); };
  auto S = [&](MoeScalar i) { return a.scalar(i); };
  CoreTaskArgs gate;
  gate.add_input(T(kLogits)).add_output(T(kIds)).add_output(T(kW)).add_scalar(S(kMode)).add_scalar(S(kTokenBase));
  rt_submit_aiv_task(kernels::builtin_id::kTopkGating, gate);
  CoreTaskArgs disp;
  disp.add_input(T(kX)).add_input(T(kIds)).add_input(T(kW));
  disp.add_output(T(kRecvX)).add_output(T(kRecvW)).add_output(T(kRecvMeta)).add_output(T(kRecvCount));
  for (MoeScalar s : {kCtx, kExperts, kCountsOff, kRecvXOff, kRecvWOff, kRecvMetaOff}) disp.add_scalar(S(s));
  rt_submit_aiv_task(cid::kMoeDispatch, disp);
  CoreTaskArgs ffn;
  ffn.add_input(T(kRecvX)).add_input(T(kRecvCount)).add_input(T(kWGate)).add_input(T(kWUp)).add_input(T(kWDown));
  ffn.add_output(T(kRecvY));
  rt_submit_aic_task(cid::kMoeExpertFfn, ffn);
  CoreTaskArgs comb;
  comb.add_input(T(kRecvY)).add_input(T(kRecvMeta)).add_input(T(kRecvCount)).add_input(T(kW)).add_output(T(kOut));
  comb.add_scalar(S(kCtx)).add_scalar(S(kRetOff));
  rt_submit_aiv_task(cid::kMoeCombine, comb);
}
PTO2OrchestrationConfig moe_step_config(const ChipTaskArgs&) {
  return PTO2OrchestrationConfig{static_cast<int>(kMoeTensors) + static_cast<int>(kMoeScalars)};
}

// One entry per member on this node (every rank of a one-node domain);
// `here` is d.chips().size(), which the caller has at hand.
Status check_ranks(const CommDomain& d, size_t here, size_t got, const char* what) {
  if (got == here) return Status::Ok();
  return invalid_argument(std::string(what) + ": " + std::to_string(got) + " per-rank entries for the " +
                          std::to_string(here) + " ranks of domain '" + d.name() + "' on this node");
}

Status check_ranks(const CommDomain& d, size_t got, const char* what) {
  return check_ranks(d, d.chips().size(), got, what);
}

Expected<uint64_t> scratch_for(const CommDomain& d, std::string_view name, uint64_t need, const char* what) {
  auto off = d.buffer_offset(name);
  if (!off.ok()) return off.status().with_context(what);
  // The buffer runs to the next one or the window's end; every buffer is
  // 64-aligned, so the room left in the window bounds it.
  if (*off + need > d.window_size())
    return invalid_argument(std::string(what) + ": scratch buffer '" + std::string(name) + "' of domain '" + d.name() +
                            "' at offset " + std::to_string(*off) + " leaves " +
                            std::to_string(d.window_size() - *off) + " B in the window; this collective needs " +
                            std::to_string(need));
  return off;
}

// One group task of comm kernel `kernel` over the members `chips` of `d`:
// rank i's arguments are what `tensors(i, args)` adds, the kernel id and
// the rank's device_ctx, then what `scalars(i, args)` adds (a TaskArgs takes
// its tensors before any scalar). Built once, in place: a collective from
// Python paid a second 4.3 KiB ChipTaskArgs per rank and a copy for the
// generic submit_comm_group (two 8.5 KiB mallocs per 2-rank allreduce).
template <typename Tensors, typename Scalars>
Status submit_filled(Orchestrator& o, int comm, const CommDomain& d, const std::vector<int>& chips, int32_t kernel,
                     Tensors&& tensors, Scalars&& scalars, const char* what) {
  // Up to kOnStack ranks on the stack (17 KiB): an 8.5 KiB malloc and free
  // were a tenth of a 2-rank collective's submit.
  constexpr size_t kOnStack = 4;
  std::array<ChipTaskArgs, kOnStack> local;
  std::array<const ChipTaskArgs*, kOnStack> local_ptrs;
  std::vector<ChipTaskArgs> heap(chips.size() > kOnStack ? chips.size() : 0);
  std::vector<const ChipTaskArgs*> heap_ptrs(heap.size());
  const std::span<ChipTaskArgs> args = heap.empty() ? std::span<ChipTaskArgs>(local.data(), chips.size()) : heap;
  const std::span<const ChipTaskArgs*> ptrs =
      heap.empty() ? std::span<const ChipTaskArgs*>(local_ptrs.data(), chips.size()) : heap_ptrs;
  for (size_t i = 0; i < chips.size(); ++i) {
    TASKRING_ASSIGN_OR_RETURN(const DomainMember m, d.member(chips[i]));
    if (Status s = tensors(i, args[i]); !s.ok()) return s;
    args[i].add_scalar(static_cast<uint64_t>(kernel)).add_scalar(m.device_ctx);
    scalars(i, args[i]);
    if (args[i].has_error())
      return invalid_argument(std::string(what) + ": rank " + std::to_string(i) + ": " + args[i].error_msg());
    ptrs[i] = &args[i];
  }
  return o.submit_next_level_group(comm, ptrs, chips);
}

Status two_tensor(Orchestrator& o, int comm, const CommDomain& d, int32_t kernel, std::span<const ChipTensor> in,
                  std::span<const ChipTensor> out, std::string_view scratch, CollectiveOp op,
                  std::span<const uint64_t> pre_scalars, const char* what) {
  const std::vector<int> chips = d.chips();
  TASKRING_RETURN_IF_ERROR(check_ranks(d, chips.size(), in.size(), what));
  TASKRING_RETURN_IF_ERROR(check_ranks(d, chips.size(), out.size(), what));
  const uint64_t need = kernels::collective_scratch_bytes(op, in[0].numel(), element_size(in[0].dtype), d.size());
  TASKRING_ASSIGN_OR_RETURN(const uint64_t off, scratch_for(d, scratch, need, what));
  auto tensors = [&](size_t i, ChipTaskArgs& a) -> Status {
    if (in[i].numel() != in[0].numel())
      return invalid_argument(std::string(what) + ": rank " + std::to_string(i) + "'s input has " +
                              std::to_string(in[i].numel()) + " elements, rank 0's " + std::to_string(in[0].numel()));
    a.add_input(in[i]).add_output(out[i]);
    return Status::Ok();
  };
  auto scalars = [&](size_t, ChipTaskArgs& a) {
    for (uint64_t s : pre_scalars) a.add_scalar(s);
    a.add_scalar(off);
  };
  return submit_filled(o, comm, d, chips, kernel, tensors, scalars, what);
}

}  // namespace

ChipCallable comm_call_callable() { return with_comm_kernels("comm_call", comm_call_entry, comm_call_config); }

ChipCallable moe_step_callable() { return with_comm_kernels("moe_step", moe_step_entry, moe_step_config); }

Status submit_comm_group(Orchestrator& o, int comm_call, const CommDomain& d, int32_t kernel_id,
                         std::span<const ChipTaskArgs> rank_args) {
  const std::vector<int> chips = d.chips();
  TASKRING_RETURN_IF_ERROR(check_ranks(d, chips.size(), rank_args.size(), "submit_comm_group"));
  auto tensors = [&](size_t i, ChipTaskArgs& a) -> Status {
    const ChipTaskArgs& r = rank_args[i];
    if (r.has_error()) return invalid_argument("submit_comm_group: rank " + std::to_string(i) + ": " + r.error_msg());
    for (int t = 0; t < r.tensor_count(); ++t) a.add_tensor(*r.tensor(t), r.tag(t));
    return Status::Ok();
  };
  auto scalars = [&](size_t i, ChipTaskArgs& a) {
    for (int s = 0; s < rank_args[i].scalar_count(); ++s) a.add_scalar(rank_args[i].scalar(s));
  };
  return submit_filled(o, comm_call, d, chips, kernel_id, tensors, scalars, "submit_comm_group");
}

Status submit_allreduce(Orchestrator& o, int comm_call, const CommDomain& d, std::span<const ChipTensor> in,
                        std::span<const ChipTensor> out, kernels::AllreduceAlgo algo, std::string_view scratch) {
  if (static_cast<uint32_t>(algo) > static_cast<uint32_t>(kernels::AllreduceAlgo::kAuto))
    return invalid_argument("submit_allreduce: algorithm " + std::to_string(static_cast<uint32_t>(algo)) +
                            " is not one of one-phase (0), ring (1), direct (2), auto (3)");
  // kAuto picks one-phase or direct, which need the same scratch.
  const CollectiveOp op = algo == kernels::AllreduceAlgo::kOnePhase ? CollectiveOp::kAllreduceOnePhase
                          : algo == kernels::AllreduceAlgo::kRing   ? CollectiveOp::kAllreduceRing
                                                                    : CollectiveOp::kAllreduceDirect;
  const uint64_t pre[1] = {static_cast<uint64_t>(algo)};
  return two_tensor(o, comm_call, d, cid::kAllreduce, in, out, scratch, op, pre, "submit_allreduce");
}

Status submit_allgather(Orchestrator& o, int comm_call, const CommDomain& d, std::span<const ChipTensor> in,
                        std::span<const ChipTensor> out, std::string_view scratch) {
  return two_tensor(o, comm_call, d, cid::kAllgather, in, out, scratch, CollectiveOp::kAllgather, {},
                    "submit_allgather");
}

Status submit_reduce_scatter(Orchestrator& o, int comm_call, const CommDomain& d, std::span<const ChipTensor> in,
                             std::span<const ChipTensor> out, std::string_view scratch) {
  return two_tensor(o, comm_call, d, cid::kReduceScatter, in, out, scratch, CollectiveOp::kReduceScatter, {},
                    "submit_reduce_scatter");
}

Status submit_all_to_all(Orchestrator& o, int comm_call, const CommDomain& d, std::span<const ChipTensor> in,
                         std::span<const ChipTensor> out, std::string_view scratch) {
  return two_tensor(o, comm_call, d, cid::kAllToAll, in, out, scratch, CollectiveOp::kAllToAll, {},
                    "submit_all_to_all");
}

Status submit_broadcast(Orchestrator& o, int comm_call, const CommDomain& d, std::span<const ChipTensor> buf, int root,
                        std::string_view scratch) {
  const std::vector<int> chips = d.chips();
  TASKRING_RETURN_IF_ERROR(check_ranks(d, chips.size(), buf.size(), "submit_broadcast"));
  if (root < 0 || root >= d.size())
    return out_of_range("submit_broadcast: root " + std::to_string(root) + " is not a rank of domain '" + d.name() +
                        "'");
  const uint64_t need =
      kernels::collective_scratch_bytes(CollectiveOp::kBroadcast, buf[0].numel(), element_size(buf[0].dtype), d.size());
  TASKRING_ASSIGN_OR_RETURN(const uint64_t off, scratch_for(d, scratch, need, "submit_broadcast"));
  auto tensors = [&](size_t i, ChipTaskArgs& a) -> Status {
    a.add_inout(buf[i]);
    return Status::Ok();
  };
  auto scalars = [&](size_t, ChipTaskArgs& a) { a.add_scalar(static_cast<uint64_t>(root)).add_scalar(off); };
  return submit_filled(o, comm_call, d, chips, cid::kBroadcast, tensors, scalars, "submit_broadcast");
}

std::vector<DomainBufferSpec> moe_window_buffers(const MoeShape& s, int ranks) {
  const uint64_t n = static_cast<uint64_t>(ranks), el = s.experts / std::max<uint64_t>(n, 1);
  const uint64_t rows = s.staging_rows(ranks);
  return {
      {"moe_counts", 4 * n * (el + 1)},
      {"moe_recv_x", rows * s.hidden * 2},
      {"moe_recv_w", rows * 4},
      {"moe_recv_meta", rows * 12},
      {"moe_ret", uint64_t{4} * s.tokens * s.topk * s.hidden},
  };
}

uint64_t moe_window_bytes(const MoeShape& s, int ranks) {
  uint64_t b = 0;
  for (const DomainBufferSpec& x : moe_window_buffers(s, ranks)) b += align_up(x.bytes, 64);
  return b;
}

Status submit_moe_step(Orchestrator& o, int moe_step, const CommDomain& d, std::span<const MoeRankTensors> ranks,
                       const MoeShape& s, bool balanced) {
  TASKRING_RETURN_IF_ERROR(check_ranks(d, ranks.size(), "submit_moe_step"));
  if (s.experts == 0 || s.experts % static_cast<uint32_t>(d.size()) != 0 || s.topk == 0 || s.topk > s.experts)
    return invalid_argument("submit_moe_step: experts " + std::to_string(s.experts) +
                            " must be a positive multiple of the " + std::to_string(d.size()) + " ranks and topk " +
                            std::to_string(s.topk) + " in [1, experts]");
  uint64_t offs[5];
  const char* names[5] = {"moe_counts", "moe_recv_x", "moe_recv_w", "moe_recv_meta", "moe_ret"};
  for (int i = 0; i < 5; ++i) {
    auto off = d.buffer_offset(names[i]);
    if (!off.ok()) return off.status().with_context("submit_moe_step (allocate the domain with moe_window_buffers)");
    offs[i] = *off;
  }
  const std::vector<int> chips = d.chips();
  std::vector<ChipTaskArgs> args(ranks.size());
  std::vector<const ChipTaskArgs*> ptrs;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const MoeRankTensors& r = ranks[i];
    TASKRING_ASSIGN_OR_RETURN(const DomainMember m, d.member(chips[i]));
    ChipTaskArgs& a = args[i];
    a.add_input(r.logits).add_input(r.x).add_input(r.w_gate).add_input(r.w_up).add_input(r.w_down);
    a.add_output(r.topk_ids).add_output(r.topk_w).add_output(r.recv_x).add_output(r.recv_w).add_output(r.recv_meta);
    a.add_output(r.recv_count).add_output(r.recv_y).add_output(r.out);
    a.add_scalar(m.device_ctx).add_scalar(uint64_t{s.experts}).add_scalar(uint64_t{balanced ? 1u : 0u});
    a.add_scalar(uint64_t{s.tokens} * static_cast<uint64_t>(m.rank));  // global token index base
    for (uint64_t off : offs) a.add_scalar(off);
    if (a.has_error()) return invalid_argument("submit_moe_step: rank " + std::to_string(i) + ": " + a.error_msg());
    ptrs.push_back(&a);
  }
  return o.submit_next_level_group(moe_step, ptrs, chips);
}

}  // namespace taskring::node
