// Tiled batched matmul on the built-in matmul kernel.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "pto_orchestration_api.h"
#include "taskring/kernels/builtin_ids.hpp"
#include "taskring/workloads/bgemm.hpp"
#include "taskring/workloads/host_data.hpp"

namespace taskring::workloads {
namespace {

enum Scalar { kBatch, kGridM, kGridN, kGridK, kTile, kScalarCount };

PTO2OrchestrationConfig bgemm_config(const ChipTaskArgs&) { return PTO2OrchestrationConfig{3 + kScalarCount}; }

// Entry arguments: INPUT A [batch·M, K], INPUT B [batch·K, N],
// OUTPUT_EXISTING C [batch·M, N] (FP32, batches stacked along the rows),
// then the scalars of `Scalar`. Edges come from the TensorMap: the k-splits
// of one C tile overlap exactly, so each waits for the previous one.
void bgemm_entry(const ChipTaskArgs& args) {
  const ChipTensor& A = *args.tensor(0);
  const ChipTensor& B = *args.tensor(1);
  const ChipTensor& C = *args.tensor(2);
  const auto s = [&](Scalar i) { return static_cast<uint32_t>(args.scalar(i)); };
  const uint32_t batch = s(kBatch), gm = s(kGridM), gn = s(kGridN), gk = s(kGridK), t = s(kTile);
  const uint32_t M = gm * t, K = gk * t;
  for (uint32_t b = 0; b < batch; ++b) {
    for (uint32_t i = 0; i < gm; ++i) {
      for (uint32_t j = 0; j < gn; ++j) {
        const ChipTensor c = C.view({t, t}, {b * M + i * t, j * t});
        for (uint32_t k = 0; k < gk; ++k) {
          const ChipTensor a = A.view({t, t}, {b * M + i * t, k * t});
          const ChipTensor bt = B.view({t, t}, {b * K + k * t, j * t});
          CoreTaskArgs task;
          task.add_input(a).add_input(bt);
          if (k == 0)
            task.add_output(c);
          else
            task.add_inout(c);
          task.add_scalar(uint32_t{k > 0})
              .add_scalar(uint32_t{0})
              .add_scalar(uint32_t{0});  // accumulate, trans_a, trans_b
          rt_submit_aic_task(kernels::builtin_id::kMatmul, task);
        }
      }
    }
  }
}

class BgemmWorkload final : public Workload {
 public:
  BgemmWorkload() {
    params_.add("batch", 4, 1, 4096, "independent matrix products")
        .add("grid_m", 2, 1, 64, "C tiles along M")
        .add("grid_n", 2, 1, 64, "C tiles along N")
        .add("grid_k", 4, 1, 64, "k-splits accumulated into each C tile")
        .add("tile", 128, 1, 512, "tile edge (tile x tile FP32 blocks)")
        .add("seed", 1, 0, INT32_MAX, "seed of the random inputs");
  }

  std::string_view name() const override { return "bgemm"; }
  std::string_view summary() const override {
    return "tiled batched matmul C[b] = A[b]*B[b] with k-split accumulation";
  }

  Status setup() override {
    const int64_t rows = params_.get("batch") * params_.get("grid_m") * params_.get("tile");
    const int64_t krows = params_.get("batch") * params_.get("grid_k") * params_.get("tile");
    if (std::max(rows, krows) > UINT32_MAX)
      return invalid_argument("bgemm: batch*grid*tile = " + std::to_string(std::max(rows, krows)) +
                              " rows exceeds a tensor dimension (2^32-1)");
    const int64_t floats = rows * params_.get("grid_k") * params_.get("tile") +
                           krows * params_.get("grid_n") * params_.get("tile") +
                           rows * params_.get("grid_n") * params_.get("tile");
    if (floats > (int64_t{1} << 28))
      return invalid_argument("bgemm: A, B and C together hold " + std::to_string(floats) +
                              " floats, more than the 2^28 this workload allows; lower batch, grid_* or tile");
    batch_ = params_.get("batch");
    m_ = params_.get("grid_m") * params_.get("tile");
    n_ = params_.get("grid_n") * params_.get("tile");
    k_ = params_.get("grid_k") * params_.get("tile");
    const uint64_t seed = static_cast<uint64_t>(params_.get("seed"));
    a_ = uniform_floats(batch_ * m_ * k_, seed * 2 + 0);
    b_ = uniform_floats(batch_ * k_ * n_, seed * 2 + 1);
    c_.assign(batch_ * m_ * n_, 0.0f);
    reference();
    ta_ = make_tensor_external(a_.data(), {static_cast<uint32_t>(batch_ * m_), static_cast<uint32_t>(k_)});
    tb_ = make_tensor_external(b_.data(), {static_cast<uint32_t>(batch_ * k_), static_cast<uint32_t>(n_)});
    tc_ = make_tensor_external(c_.data(), {static_cast<uint32_t>(batch_ * m_), static_cast<uint32_t>(n_)});
    return Status::Ok();
  }

  ChipCallable callable() const override {
    ChipCallable c;
    c.name = "bgemm";
    c.entry = bgemm_entry;
    c.config = bgemm_config;
    return c;
  }

  Status bind_args(ChipTaskArgs& args) override {
    std::fill(c_.begin(), c_.end(), 0.0f);
    args.add_input(ta_).add_input(tb_).add_output(tc_);
    for (const char* p : {"batch", "grid_m", "grid_n", "grid_k", "tile"}) args.add_scalar(params_.get(p));
    return Status::Ok();
  }

  Status check(GoldenStats* stats) const override {
    // FP32 products accumulated over K: allow a few ulps per term.
    const double tol = 1e-5 * static_cast<double>(k_) + 1e-4;
    return compare_to_reference("bgemm C", c_, want_, Tolerance{tol, 1e-4}, stats);
  }

  // Two-thread OpenBLAS on the same matrices: one sgemm per batch of the
  // whole M×K·K×N product (what the tiles add up to), into scratch. OpenBLAS
  // runs single-threaded everywhere else (kernels run one per core thread),
  // so the pool is widened for the measurement and narrowed again after.
  std::optional<Yardstick> yardstick(int reps) override {
    std::vector<float> c(c_.size());
    const int M = static_cast<int>(m_), N = static_cast<int>(n_), K = static_cast<int>(k_);
    auto once = [&] {
      for (int64_t b = 0; b < batch_; ++b)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a_.data() + b * m_ * k_, K,
                    b_.data() + b * k_ * n_, N, 0.0f, c.data() + b * m_ * n_, N);
    };
    openblas_set_num_threads(2);
    once();  // warm: pool threads, caches
    std::vector<double> ns;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      once();
      ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
    }
    openblas_set_num_threads(1);
    std::sort(ns.begin(), ns.end());
    Yardstick y;
    y.name = "openblas-2t sgemm";
    y.flops =
        2.0 * static_cast<double>(batch_) * static_cast<double>(m_) * static_cast<double>(n_) * static_cast<double>(k_);
    y.median_ns = ns.empty() ? 0 : ns[ns.size() / 2];
    y.reps = reps;
    return y;
  }

  std::span<float> output() override { return c_; }
  uint64_t expected_tasks() const override {
    return static_cast<uint64_t>(params_.get("batch") * params_.get("grid_m") * params_.get("grid_n") *
                                 params_.get("grid_k"));
  }

 private:
  // want[b] = A[b]·B[b] in double, i-k-j order.
  void reference() {
    want_.assign(batch_ * m_ * n_, 0.0);
    for (int64_t b = 0; b < batch_; ++b) {
      const float* A = a_.data() + b * m_ * k_;
      const float* B = b_.data() + b * k_ * n_;
      double* W = want_.data() + b * m_ * n_;
      for (int64_t i = 0; i < m_; ++i) {
        double* row = W + i * n_;
        for (int64_t k = 0; k < k_; ++k) {
          const double aik = A[i * k_ + k];
          const float* brow = B + k * n_;
          for (int64_t j = 0; j < n_; ++j) row[j] += aik * brow[j];
        }
      }
    }
  }

  int64_t batch_ = 0, m_ = 0, n_ = 0, k_ = 0;
  std::vector<float> a_, b_, c_;
  std::vector<double> want_;
  ChipTensor ta_, tb_, tc_;
};

}  // namespace

std::unique_ptr<Workload> make_bgemm_workload() { return std::make_unique<BgemmWorkload>(); }

}  // namespace taskring::workloads
