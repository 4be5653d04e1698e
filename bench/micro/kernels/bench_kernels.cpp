// Kernel microbenchmarks, measured side by side in one run:
//   * matmul tiles (64, 128, 256; FP32 and BF16 inputs): our matmul kernel,
//     Eigen's product and OpenBLAS cblas_sgemm (1 thread), GFLOP/s + ratios;
//   * elementwise kernels (add, mul, add_scalar), the vec_math unary
//     functions (exp, sigmoid, silu, gelu) and the kernels built on them
//     (softmax, rmsnorm, swiglu) vs memcpy, GB/s. The vec_math level in use
//     and the load average before/after are part of the output.
// Each sample times a batch of calls; the cases of one group alternate
// within every sample so that drift hits them alike. Medians are reported.
#include <cblas.h>

#include <CLI/CLI.hpp>
#include <Eigen/Core>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "load_average.hpp"
#include "taskring/kernels/builtin.hpp"
#include "taskring/kernels/invoke.hpp"
#include "taskring/kernels/tile.hpp"
#include "taskring/kernels/vec_math.hpp"

namespace {

using namespace taskring;

// Thread CPU time by default: the build machines are shared and
// oversubscribed, and CPU time leaves out the time this thread was
// preempted. --wall switches to the steady clock.
bool g_wall = false;
double now_s() {
  timespec ts;
  clock_gettime(g_wall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct Buffer {
  std::vector<uint64_t> storage;
  ChipTensor t;
  Buffer(std::vector<uint32_t> shape, DataType dt, uint32_t seed) {
    uint64_t n = 1;
    for (uint32_t s : shape) n *= s;
    storage.assign((n * element_size(dt) + 7) / 8, 0);
    t = *try_make_tensor(reinterpret_cast<uint64_t>(storage.data()), n * element_size(dt), shape, dt);
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    char* p = reinterpret_cast<char*>(storage.data());
    for (uint64_t i = 0; i < n; ++i) tile::write_from_float(p + i * element_size(dt), dt, d(g));
  }
  float* f32() { return reinterpret_cast<float*>(storage.data()); }
};

// Calls needed for one sample to last about `target_ms`.
int calibrate(const std::function<void()>& fn, double target_ms) {
  int iters = 1;
  for (;;) {
    const double t0 = now_s();
    for (int i = 0; i < iters; ++i) fn();
    const double ms = (now_s() - t0) * 1e3;
    if (ms >= target_ms / 4 || iters > (1 << 24))
      return std::max(1, static_cast<int>(iters * target_ms / std::max(ms, 1e-6)));
    iters *= 4;
  }
}

// Median seconds per call of each fn, sampled in alternation.
std::vector<double> measure(const std::vector<std::function<void()>>& fns, int samples, double target_ms) {
  std::vector<int> iters;
  for (auto& f : fns) {
    f();  // warm caches and scratch
    iters.push_back(calibrate(f, target_ms));
  }
  std::vector<std::vector<double>> t(fns.size());
  for (int s = 0; s < samples; ++s)
    for (size_t i = 0; i < fns.size(); ++i) {
      const double t0 = now_s();
      for (int k = 0; k < iters[i]; ++k) fns[i]();
      t[i].push_back((now_s() - t0) / iters[i]);
    }
  std::vector<double> med;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    med.push_back(v[v.size() / 2]);
  }
  return med;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

using taskring::bench::loadavg;

void do_not_optimize(void* p) { asm volatile("" : : "g"(p) : "memory"); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"taskring kernel microbenchmarks"};
  // No JSON unless asked for: a default file name landed result files in
  // whatever directory the bench ran from (the source tree's root).
  std::string json_path;
  int samples = 15;
  double target_ms = 20.0;
  app.add_option("--json", json_path, "write the JSON results to this file");
  app.add_option("--samples", samples, "samples per case (median reported)");
  app.add_option("--sample-ms", target_ms, "duration of one sample in ms");
  app.add_flag("--wall", g_wall, "time with the wall clock instead of thread CPU time");
  CLI11_PARSE(app, argc, argv);

  const std::string load_before = loadavg();
  tile::ensure_single_threaded_math();
  Eigen::setNbThreads(1);
  kernels::KernelRegistry reg;
  if (Status s = kernels::register_builtin_kernels(reg); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.to_string().c_str());
    return 1;
  }
  auto call = [&](int32_t id, std::vector<ChipTensor> ts, std::vector<uint64_t> sc) {
    taskring_kernel_fn fn = reg.find(id);
    return [fn, ts = std::move(ts), sc = std::move(sc)] {
      Status s =
          kernels::invoke_kernel(fn, ts.data(), static_cast<int>(ts.size()), sc.data(), static_cast<int>(sc.size()));
      if (!s.ok()) std::abort();
    };
  };

  nlohmann::json out;
  out["machine"] = {{"cpu", cpu_model()},
                    {"hardware_threads", std::thread::hardware_concurrency()},
                    {"compiler", __VERSION__},
                    {"openblas_threads", openblas_get_num_threads()},
                    {"openblas_config", openblas_get_config()},
                    {"eigen_simd", Eigen::SimdInstructionSetsInUse()},
                    {"vec_math_level", std::string(vec::level_name(vec::active().level))}};
  out["samples"] = samples;
  out["sample_ms"] = target_ms;
  out["clock"] = g_wall ? "wall (CLOCK_MONOTONIC)" : "thread CPU time (CLOCK_THREAD_CPUTIME_ID)";

  std::printf("machine: %s, %u hw threads, OpenBLAS %s (threads %d), Eigen SIMD: %s, vec_math: %s\nloadavg: %s\n\n",
              cpu_model().c_str(), std::thread::hardware_concurrency(), openblas_get_config(),
              openblas_get_num_threads(), Eigen::SimdInstructionSetsInUse(),
              std::string(vec::level_name(vec::active().level)).c_str(), load_before.c_str());
  std::printf("%-6s %-5s %12s %12s %12s %12s %10s %10s\n", "matmul", "in", "ours GF/s", "eigen GF/s", "sgemm GF/s", "",
              "ours/blas", "eigen/blas");
  for (uint32_t n : {64u, 128u, 256u}) {
    Buffer a({n, n}, DataType::FP32, 1), b({n, n}, DataType::FP32, 2), c({n, n}, DataType::FP32, 3);
    Buffer ab({n, n}, DataType::BF16, 1), bb({n, n}, DataType::BF16, 2);
    using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<Mat> ea(a.f32(), n, n), eb(b.f32(), n, n), ec(c.f32(), n, n);
    const int in = static_cast<int>(n);
    auto blas = [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, in, in, in, 1.0f, a.f32(), in, b.f32(), in, 0.0f, c.f32(),
                  in);
      do_not_optimize(c.f32());
    };
    auto eigen = [&] {
      ec.noalias() = ea * eb;
      do_not_optimize(c.f32());
    };
    auto ours = call(kernels::builtin_id::kMatmul, {a.t, b.t, c.t}, {0});
    auto ours_bf16 = call(kernels::builtin_id::kMatmul, {ab.t, bb.t, c.t}, {0});
    std::vector<double> t = measure({ours, eigen, blas, ours_bf16}, samples, target_ms);
    const double flops = 2.0 * n * n * n;
    const double g_ours = flops / t[0] / 1e9, g_eigen = flops / t[1] / 1e9, g_blas = flops / t[2] / 1e9,
                 g_bf16 = flops / t[3] / 1e9;
    std::printf("%-6u %-5s %12.2f %12.2f %12.2f %12s %10.3f %10.3f\n", n, "FP32", g_ours, g_eigen, g_blas, "",
                g_ours / g_blas, g_eigen / g_blas);
    std::printf("%-6u %-5s %12.2f %12s %12.2f %12s %10.3f %10s\n", n, "BF16", g_bf16, "-", g_blas, "", g_bf16 / g_blas,
                "-");
    out["matmul"].push_back({{"n", n},
                             {"ours_fp32_gflops", g_ours},
                             {"eigen_fp32_gflops", g_eigen},
                             {"openblas_sgemm_gflops", g_blas},
                             {"ours_bf16_gflops", g_bf16},
                             {"ours_fp32_vs_openblas", g_ours / g_blas},
                             {"eigen_fp32_vs_openblas", g_eigen / g_blas},
                             {"ours_bf16_vs_openblas_fp32", g_bf16 / g_blas}});
  }

  std::printf("\n%-12s %-9s %12s %12s %10s\n", "elementwise", "tile", "kernel GB/s", "memcpy GB/s", "ratio");
  for (uint32_t n : {128u, 512u}) {
    Buffer a({n, n}, DataType::FP32, 4), b({n, n}, DataType::FP32, 5), o({n, n}, DataType::FP32, 6);
    const size_t bytes = static_cast<size_t>(n) * n * 4;
    auto cpy = [&] {
      std::memcpy(o.f32(), a.f32(), bytes);
      do_not_optimize(o.f32());
    };
    tile::View2D va = *tile::view_2d(a.t), vo = *tile::view_2d(o.t);
    auto exp_fn = [&] {
      tile::unary(tile::UnaryOp::kExp, tile::cmap_f32(va), tile::map_f32(vo));
      do_not_optimize(o.f32());
    };
    auto unary_fn = [&](tile::UnaryOp op) {
      return [&, op] {
        tile::unary(op, tile::cmap_f32(va), tile::map_f32(vo));
        do_not_optimize(o.f32());
      };
    };
    Buffer w({n}, DataType::FP32, 7);
    auto add = call(kernels::builtin_id::kAdd, {a.t, b.t, o.t}, {});
    auto mul = call(kernels::builtin_id::kMul, {a.t, b.t, o.t}, {});
    auto adds = call(kernels::builtin_id::kAddScalar, {a.t, o.t}, {kernels::scalar_from_float(1.0f)});
    auto softmax = call(kernels::builtin_id::kSoftmax, {a.t, o.t}, {});
    auto rmsnorm = call(kernels::builtin_id::kRmsNorm, {a.t, w.t, o.t}, {kernels::scalar_from_float(1e-6f)});
    auto swiglu = call(kernels::builtin_id::kSwiGlu, {a.t, b.t, o.t}, {});
    std::vector<double> t =
        measure({add, mul, adds, exp_fn, cpy, unary_fn(tile::UnaryOp::kSigmoid), unary_fn(tile::UnaryOp::kSilu),
                 unary_fn(tile::UnaryOp::kGelu), softmax, rmsnorm, swiglu},
                samples, target_ms);
    const double memcpy_gbs = 2.0 * bytes / t[4] / 1e9;  // read + write
    struct Row {
      const char* name;
      double streams;
      double sec;
    };
    const Row rows[] = {{"add", 3, t[0]},     {"mul", 3, t[1]},    {"add_scalar", 2, t[2]}, {"exp", 2, t[3]},
                        {"sigmoid", 2, t[5]}, {"silu", 2, t[6]},   {"gelu", 2, t[7]},       {"softmax", 2, t[8]},
                        {"rmsnorm", 2, t[9]}, {"swiglu", 3, t[10]}};
    for (const Row& r : rows) {
      const double gbs = r.streams * bytes / r.sec / 1e9;
      std::printf("%-12s %4ux%-4u %12.2f %12.2f %10.3f\n", r.name, n, n, gbs, memcpy_gbs, gbs / memcpy_gbs);
      out["elementwise"].push_back({{"kernel", r.name},
                                    {"tile", std::to_string(n) + "x" + std::to_string(n)},
                                    {"gbytes_per_s", gbs},
                                    {"memcpy_gbytes_per_s", memcpy_gbs},
                                    {"ratio_vs_memcpy", gbs / memcpy_gbs}});
    }
  }
  out["loadavg_before"] = load_before;
  out["loadavg_after"] = loadavg();
  std::printf("\nloadavg before: %s, after: %s\n", load_before.c_str(), loadavg().c_str());
  if (json_path.empty()) return 0;
  std::ofstream file(json_path);
  file << out.dump(2) << "\n";
  if (!file.flush()) {
    std::fprintf(stderr, "bench_kernels: cannot write --json %s\n", json_path.c_str());
    return 1;
  }
  std::printf("\nJSON: %s\n", json_path.c_str());
  return 0;
}
