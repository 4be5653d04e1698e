// The MoE step on MPI (moe_mpi_step.hpp). What travels: a record per
// routed (token, k), its token index and k (8 B) and its BF16 row, sent by
// owner rank then local expert then (token, k); the return trip carries the
// FP32 expert output of each record in the order it arrived, so the source
// puts it back by its own send order and needs no metadata from the owner.
#include "moe_mpi_step.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>

#include "taskring/kernels/builtin.hpp"
#include "taskring/kernels/comm_kernels.hpp"
#include "taskring/kernels/invoke.hpp"
#include "taskring/kernels/tile_cast.hpp"
#include "taskring/tensor/chip_tensor.hpp"
#include "taskring/workloads/moe_reference.hpp"

namespace taskring::bench {
namespace {

uint64_t record_bytes(const node::MoeShape& s) { return 8 + 2ull * s.hidden; }

// Byte displacements from byte counts.
void displacements(const std::vector<int>& bytes, std::vector<int>& displ) {
  int at = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    displ[i] = at;
    at += bytes[i];
  }
}

Status gate(MoeMpiRank& r) {
  const uint32_t T = r.s.tokens, E = r.s.experts, K = r.s.topk;
  const ChipTensor t[3] = {make_tensor_external(r.in.logits.data(), {T, E}),
                           make_tensor_external(r.ids.data(), {T, K}, DataType::INT32),
                           make_tensor_external(r.w.data(), {T, K})};
  const uint64_t sc[2] = {r.balanced ? 1u : 0u, uint64_t{T} * static_cast<uint64_t>(r.rank)};
  return kernels::invoke_kernel(kernels::taskring_builtin_topk_gating, t, 3, sc, 2, nullptr, "topk_gating");
}

// Per-expert histogram of this rank's routes; E = ranks blocks of El, one
// per owner, which MPI_Alltoall hands to the owners.
Status count_routes(MoeMpiRank& r) {
  std::fill(r.hist.begin(), r.hist.end(), 0);
  for (size_t i = 0; i < r.ids.size(); ++i) {
    const int32_t e = r.ids[i];
    if (e < 0 || e >= static_cast<int32_t>(r.hist.size()))
      return internal_error("moe anchor: rank " + std::to_string(r.rank) + " routed (token, k) " + std::to_string(i) +
                            " to expert " + std::to_string(e) + " of " + std::to_string(r.hist.size()));
    ++r.hist[static_cast<size_t>(e)];
  }
  return Status::Ok();
}

// Packs the records in owner, local expert, (token, k) order, then sends.
void dispatch(MoeMpiRank& r, MPI_Comm comm) {
  const uint32_t D = r.s.hidden, K = r.s.topk, El = r.s.experts / r.ranks;
  const uint64_t rb = record_bytes(r.s);
  uint32_t at = 0;
  for (size_t e = 0; e < r.hist.size(); ++e) {
    r.next_row[e] = at;
    at += static_cast<uint32_t>(r.hist[e]);
  }
  for (uint32_t t = 0; t < r.s.tokens; ++t)
    for (uint32_t j = 0; j < K; ++j) {
      const uint32_t row = r.next_row[static_cast<size_t>(r.ids[t * K + j])]++;
      char* rec = r.send_rows.data() + row * rb;
      const int32_t tk[2] = {static_cast<int32_t>(t), static_cast<int32_t>(j)};
      std::memcpy(rec, tk, 8);
      std::memcpy(rec + 8, r.in.x.data() + uint64_t{t} * D, 2ull * D);
      r.sent_slot[row] = t * K + j;
    }
  for (int p = 0; p < r.ranks; ++p) {
    int sent = 0, got = 0;
    for (uint32_t le = 0; le < El; ++le) {
      sent += r.hist[p * El + le];
      got += r.recv_hist[p * El + le];
    }
    r.send_bytes[p] = static_cast<int>(sent * rb);
    r.recv_bytes[p] = static_cast<int>(got * rb);
    r.back_recv_bytes[p] = sent * 4 * static_cast<int>(D);
    r.back_send_bytes[p] = got * 4 * static_cast<int>(D);
  }
  displacements(r.send_bytes, r.send_displ);
  displacements(r.recv_bytes, r.recv_displ);
  displacements(r.back_send_bytes, r.back_send_displ);
  displacements(r.back_recv_bytes, r.back_recv_displ);
  MPI_Alltoallv(r.send_rows.data(), r.send_bytes.data(), r.send_displ.data(), MPI_BYTE, r.recv_rows.data(),
                r.recv_bytes.data(), r.recv_displ.data(), MPI_BYTE, comm);
}

// Received records into recv_x / recv_meta / recv_count in the canonical
// order the expert FFN and the golden expect: local expert, source, (token, k).
void stage_received(MoeMpiRank& r) {
  const uint32_t D = r.s.hidden, El = r.s.experts / r.ranks;
  const uint64_t rb = record_bytes(r.s);
  std::vector<uint32_t> first(static_cast<size_t>(r.ranks));  // next unread record of each source
  for (int src = 0; src < r.ranks; ++src) first[src] = static_cast<uint32_t>(r.recv_displ[src] / rb);
  uint32_t row = 0;
  for (uint32_t le = 0; le < El; ++le) {
    int32_t for_expert = 0;
    for (int src = 0; src < r.ranks; ++src) {
      const int cnt = r.recv_hist[src * El + le];
      for (int i = 0; i < cnt; ++i, ++row) {
        const uint32_t rec_i = first[src]++;
        const char* rec = r.recv_rows.data() + rec_i * rb;
        std::memcpy(&r.recv_meta[3ull * row + 1], rec, 8);
        r.recv_meta[3ull * row] = src;
        std::memcpy(r.recv_x.data() + uint64_t{row} * D, rec + 8, 2ull * D);
        r.canonical[rec_i] = row;
      }
      for_expert += cnt;
    }
    r.recv_count[le] = for_expert;
  }
  // Rows past the received ones are zero, as moe_dispatch leaves them.
  const uint64_t cap = r.s.cap(r.ranks);
  std::memset(r.recv_x.data() + uint64_t{row} * D, 0, 2 * (cap - row) * D);
  std::memset(r.recv_meta.data() + 3ull * row, 0, 12 * (cap - row));
}

Status ffn(MoeMpiRank& r) {
  const uint32_t D = r.s.hidden, F = r.s.ffn, El = r.s.experts / r.ranks, cap = r.s.cap(r.ranks);
  const ChipTensor t[6] = {make_tensor_external(r.recv_x.data(), {cap, D}, DataType::BF16),
                           make_tensor_external(r.recv_count.data(), {El}, DataType::INT32),
                           make_tensor_external(r.in.wg.data(), {El * D, F}, DataType::BF16),
                           make_tensor_external(r.in.wu.data(), {El * D, F}, DataType::BF16),
                           make_tensor_external(r.in.wd.data(), {El * F, D}, DataType::BF16),
                           make_tensor_external(r.recv_y.data(), {cap, D})};
  return kernels::invoke_kernel(kernels::taskring_comm_moe_expert_ffn, t, 6, nullptr, 0, nullptr, "moe_expert_ffn");
}

// Expert outputs back in the order their records arrived; out[t] =
// Σ_k w[t,k]·y[t,k] in FP32, k ascending, as moe_combine sums.
void combine(MoeMpiRank& r, MPI_Comm comm) {
  const uint32_t D = r.s.hidden, K = r.s.topk, T = r.s.tokens;
  const size_t got = static_cast<size_t>(r.recv_displ.back() + r.recv_bytes.back()) / record_bytes(r.s);
  for (size_t i = 0; i < got; ++i)
    std::memcpy(r.back_send.data() + i * D, r.recv_y.data() + uint64_t{r.canonical[i]} * D, 4ull * D);
  MPI_Alltoallv(r.back_send.data(), r.back_send_bytes.data(), r.back_send_displ.data(), MPI_BYTE, r.back_recv.data(),
                r.back_recv_bytes.data(), r.back_recv_displ.data(), MPI_BYTE, comm);
  std::vector<uint32_t> slot_row(uint64_t{T} * K);  // record (send order) of each (token, k)
  for (uint32_t i = 0; i < T * K; ++i) slot_row[r.sent_slot[i]] = i;
  std::vector<float> acc(D);
  for (uint32_t t = 0; t < T; ++t) {
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (uint32_t j = 0; j < K; ++j) {
      const float wt = r.w[t * K + j];
      const float* row = r.back_recv.data() + uint64_t{slot_row[t * K + j]} * D;
      for (uint32_t q = 0; q < D; ++q) acc[q] += wt * row[q];
    }
    for (uint32_t q = 0; q < D; ++q) r.out[uint64_t{t} * D + q] = tile::float_to_bf16_bits(acc[q]);
  }
}

}  // namespace

void fill_moe_mpi_inputs(MoeMpiInputs& in, const node::MoeShape& s, int ranks, int rank, uint64_t seed) {
  const uint64_t T = s.tokens, D = s.hidden, E = s.experts, F = s.ffn, El = E / static_cast<uint64_t>(ranks);
  in.logits.resize(T * E), in.x.resize(T * D), in.wg.resize(El * D * F), in.wu.resize(El * D * F);
  in.wd.resize(El * F * D);
  workloads::fill_moe_inputs(s, ranks, rank, seed, in.logits.data(), in.x.data(), in.wg.data(), in.wu.data(),
                             in.wd.data());
}

Status init_moe_mpi_rank(MoeMpiRank& r, const node::MoeShape& s, int ranks, int rank, bool balanced, uint64_t seed) {
  if (ranks < 1 || s.experts % static_cast<uint32_t>(ranks) != 0)
    return invalid_argument("moe anchor: experts " + std::to_string(s.experts) + " must be a multiple of the " +
                            std::to_string(ranks) + " ranks");
  if (s.topk < 1 || s.topk > s.experts) return invalid_argument("moe anchor: topk must be in 1..experts");
  const uint64_t cap = s.cap(ranks), T = s.tokens, D = s.hidden, E = s.experts, K = s.topk;
  const uint64_t El = E / static_cast<uint64_t>(ranks);
  if (cap * record_bytes(s) > INT_MAX || cap * 4 * D > INT_MAX)
    return invalid_argument("moe anchor: " + std::to_string(cap) + " rows of hidden " + std::to_string(D) +
                            " exceed MPI's int byte counts");
  r.s = s, r.ranks = ranks, r.rank = rank, r.balanced = balanced;
  fill_moe_mpi_inputs(r.in, s, ranks, rank, seed);
  r.ids.resize(T * K), r.w.resize(T * K), r.recv_meta.resize(3 * cap), r.recv_count.resize(El);
  r.recv_x.resize(cap * D), r.recv_y.resize(cap * D), r.out.resize(T * D);
  r.hist.resize(E), r.recv_hist.resize(E), r.next_row.resize(E);
  for (auto* v : {&r.send_bytes, &r.send_displ, &r.recv_bytes, &r.recv_displ, &r.back_send_bytes, &r.back_send_displ,
                  &r.back_recv_bytes, &r.back_recv_displ})
    v->resize(static_cast<size_t>(ranks));
  r.send_rows.resize(T * K * record_bytes(s)), r.recv_rows.resize(cap * record_bytes(s));
  r.sent_slot.resize(T * K), r.canonical.resize(cap);
  r.back_send.resize(cap * D), r.back_recv.resize(T * K * D);
  return Status::Ok();
}

void reset_moe_outputs(MoeMpiRank& r) {
  std::memset(r.out.data(), 0, 2 * r.out.size());
  std::memset(r.recv_x.data(), 0xFF, 2 * r.recv_x.size());
  std::memset(r.recv_meta.data(), 0xFF, 4 * r.recv_meta.size());
  std::memset(r.recv_count.data(), 0xFF, 4 * r.recv_count.size());
  std::memset(r.ids.data(), 0xFF, 4 * r.ids.size());
}

Status moe_mpi_step(MoeMpiRank& r, MPI_Comm comm, double* phases) {
  const int El = static_cast<int>(r.s.experts) / r.ranks;
  double t = MPI_Wtime();
  auto lap = [&](MoePhase p) {
    const double now = MPI_Wtime();
    if (phases != nullptr) phases[p] = now - t;
    t = now;
  };
  TASKRING_RETURN_IF_ERROR(gate(r));
  TASKRING_RETURN_IF_ERROR(count_routes(r));
  lap(kGate);
  MPI_Alltoall(r.hist.data(), El, MPI_INT, r.recv_hist.data(), El, MPI_INT, comm);
  lap(kCounts);
  dispatch(r, comm);
  stage_received(r);
  lap(kDispatch);
  TASKRING_RETURN_IF_ERROR(ffn(r));
  lap(kFfn);
  combine(r, comm);
  lap(kCombine);
  return Status::Ok();
}

}  // namespace taskring::bench
