// comm_probe: the kernel-side primitives one at a time, for the domain
// tests and the barrier benchmark (ProbeOp in comm_kernels.hpp), and the
// list of comm kernels.
#include <cstring>
#include <vector>

#include "builtin_util.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/kernels/comm.hpp"
#include "taskring/kernels/comm_kernels.hpp"
#include "taskring/kernels/invoke.hpp"

namespace taskring::kernels {

namespace cm = comm;

// Tensors: none, or (in, out) for kPutGet. Scalars: s0 ctx, s1 op, s2 arg.
extern "C" void taskring_comm_probe(int64_t* raw) {
  KernelArgs k(raw, "comm_probe");
  if (!k.usable() || !k.expect_counts(0, 3, 2, 5)) return;
  const cm::CommContext* cp = cm::context_arg(k, 0);
  if (cp == nullptr) return;
  const cm::CommContext& c = *cp;
  const auto op = static_cast<ProbeOp>(k.scalar(1));
  const uint64_t arg = k.scalar(2);
  switch (op) {
    case ProbeOp::kBarrier:
      for (uint64_t i = 0; i < arg; ++i)
        if (!cm::barrier(k, c)) return;
      return;
    case ProbeOp::kRingNotify: {
      // Every rank adds 1 to every other rank's signal, then waits for
      // nranks-1: a signal wiped by a late window zeroing would hang here
      // (and fail at the deadline).
      for (int p = 0; p < c.nranks; ++p)
        if (p != c.rank && !cm::notify(k, c, p, arg, cm::NotifyOp::kAdd, 1)) return;
      (void)cm::wait_signal(k, c, arg, cm::Cmp::kGe, static_cast<uint32_t>(c.nranks - 1));
      return;
    }
    case ProbeOp::kFailOnRank:
      if (static_cast<uint64_t>(c.rank) == arg) {
        (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "domain '%s' rank %d fails on purpose mid-collective",
                     cm::domain_name(c), c.rank);
        return;
      }
      (void)cm::barrier(k, c);
      return;
    case ProbeOp::kPutGet: {
      tile::View2D in, out;
      if (k.tensor_count() != 2 || !k.view(0, "in", &in, false) || !k.view(1, "out", &out, false)) {
        if (k.ctx()->error_code == 0)
          (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "put_get needs tensors in, out");
        return;
      }
      const int right = (c.rank + 1) % c.nranks, left = (c.rank + c.nranks - 1) % c.nranks;
      if (!cm::put_tile(k, c, right, arg, in) || !cm::barrier(k, c)) return;
      // Read back what the left neighbour put into this window, through the
      // left neighbour's view of it (get from peer = this rank's copy).
      const uint64_t bytes = static_cast<uint64_t>(in.numel()) * in.elem_size();
      std::vector<char> mine(bytes);
      if (!cm::get(k, c, c.rank, mine.data(), arg, bytes)) return;
      if (!cm::get_tile(k, c, c.rank, out, arg)) return;
      (void)left;
      (void)cm::barrier(k, c);
      return;
    }
    case ProbeOp::kCheckZeroThenDirty: {
      auto* w = reinterpret_cast<unsigned char*>(static_cast<uintptr_t>(c.windows[c.rank]));
      for (uint64_t i = 0; i < c.win_size; ++i)
        if (w[i] != 0)
          return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT,
                              "domain '%s' rank %d: window byte %llu is 0x%02x, not zero", cm::domain_name(c), c.rank,
                              static_cast<unsigned long long>(i), w[i]);
      std::memset(w, 0xFF, c.win_size);
      return;
    }
    case ProbeOp::kWaitForever: (void)cm::wait_signal(k, c, arg, cm::Cmp::kEq, 0xFFFFFFFFu); return;
    case ProbeOp::kTimedBarrier:
    case ProbeOp::kTimedAllreduce: {
      const bool ar = op == ProbeOp::kTimedAllreduce;
      const int want = ar ? 3 : 1;
      const ChipTensor* times = k.tensor_count() == want ? k.tensor(want - 1, "times") : nullptr;
      if (times == nullptr || times->dtype != DataType::UINT64 || times->numel() < 1) {
        if (k.ctx()->error_code == 0)
          (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "timed probes need %s a [1] UINT64 times tensor",
                       ar ? "in, out and" : "");
        return;
      }
      if (!cm::barrier(k, c)) return;
      const uint64_t t0 = mono_ns();
      for (uint64_t i = 0; i < arg; ++i) {
        if (!ar) {
          if (!cm::barrier(k, c)) return;
          continue;
        }
        const ChipTensor t[2] = {*k.tensor(0, "in"), *k.tensor(1, "out")};
        const uint64_t s[3] = {k.scalar(0), k.scalar(3), k.scalar(4)};
        KernelLocalContext inner = *k.ctx();
        Status st = invoke_kernel(taskring_comm_allreduce, t, 2, s, 3, &inner, "allreduce");
        if (!st.ok()) return (void)k.fail(TASKRING_KERNEL_ERR_DEADLINE, "%s", st.message().c_str());
      }
      *times->data<uint64_t>() = mono_ns() - t0;
      return;
    }
  }
  (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "op %llu is not a ProbeOp",
               static_cast<unsigned long long>(k.scalar(1)));
}

std::span<const CommKernel> comm_kernels() {
  namespace id = comm_id;
  static constexpr CommKernel kAll[] = {
      {id::kAllreduce, taskring_comm_allreduce, "allreduce"},
      {id::kAllgather, taskring_comm_allgather, "allgather"},
      {id::kReduceScatter, taskring_comm_reduce_scatter, "reduce_scatter"},
      {id::kBroadcast, taskring_comm_broadcast, "broadcast"},
      {id::kAllToAll, taskring_comm_all_to_all, "all_to_all"},
      {id::kMoeDispatch, taskring_comm_moe_dispatch, "moe_dispatch"},
      {id::kMoeExpertFfn, taskring_comm_moe_expert_ffn, "moe_expert_ffn"},
      {id::kMoeCombine, taskring_comm_moe_combine, "moe_combine"},
      {id::kCommProbe, taskring_comm_probe, "comm_probe"},
  };
  return kAll;
}

}  // namespace taskring::kernels
