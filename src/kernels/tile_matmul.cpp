#include "taskring/kernels/tile_matmul.hpp"

#include <cblas.h>

#include <mutex>
#include <string>

namespace taskring::tile {

void ensure_single_threaded_math() {
  // Process-wide BLAS setting: one kernel per core thread, so BLAS itself must
  // never fan out. Set once; later calls cost an atomic load.
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

BlasInfo blas_info() {
  BlasInfo b;
  b.config = openblas_get_config();
  b.core = openblas_get_corename();
  // OpenBLAS's fallbacks for x86-64 CPUs it does not know by model.
  const bool generic = b.core == "Prescott" || b.core == "Core2" || b.core == "Nehalem" || b.core == "Katmai" ||
                       b.core == "Banias" || b.core == "Atom";
#if defined(__x86_64__)
  __builtin_cpu_init();
  const char* better = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    better = "SkylakeX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    better = "Haswell";
  if (generic && better != nullptr) {
    b.better_core = better;
    b.advice = "OpenBLAS did not recognise this CPU and runs its generic " + b.core +
               " kernels; this CPU has the vector units of the " + b.better_core +
               " kernels: start with OPENBLAS_CORETYPE=" + b.better_core + " (docs/kernels.md)";
  }
#endif
  return b;
}

namespace {

bool is_mm_dtype(DataType t) { return t == DataType::FP32 || t == DataType::BF16 || t == DataType::FP16; }

// A BLAS operand: pointer, leading dimension and whether it is stored
// transposed relative to the View2D it came from.
struct Operand {
  const float* data;
  int ld;
  bool transposed;
};

// Scratch tiles per thread: a kernel thread reuses them across calls so the
// hot path does not allocate. thread_local because kernels run concurrently.
thread_local Tile scratch_a, scratch_b, scratch_c;

// Passes FP32 views with one unit stride straight to BLAS; packs the rest.
Operand operand(const View2D& v, Tile& scratch) {
  if (v.dtype == DataType::FP32) {
    if (v.col_stride == 1 && (v.rows <= 1 || v.row_stride >= v.cols))
      return {static_cast<const float*>(v.data),
              static_cast<int>(v.rows > 1 ? v.row_stride : std::max<int64_t>(v.cols, 1)), false};
    if (v.row_stride == 1 && (v.cols <= 1 || v.col_stride >= v.rows))
      return {static_cast<const float*>(v.data),
              static_cast<int>(v.cols > 1 ? v.col_stride : std::max<int64_t>(v.rows, 1)), true};
  }
  load(v, scratch);
  return {scratch.data(), static_cast<int>(std::max<int64_t>(v.cols, 1)), false};
}

std::string dims(const View2D& v) { return std::to_string(v.rows) + "x" + std::to_string(v.cols); }

}  // namespace

Status matmul(const View2D& a, const View2D& b, const View2D& c, const MatmulOptions& opt) {
  if (!is_mm_dtype(a.dtype))
    return invalid_argument("matmul: A dtype " + std::string(data_type_name(a.dtype)) + " not FP32/BF16/FP16");
  if (!is_mm_dtype(b.dtype))
    return invalid_argument("matmul: B dtype " + std::string(data_type_name(b.dtype)) + " not FP32/BF16/FP16");
  if (!is_mm_dtype(c.dtype))
    return invalid_argument("matmul: C dtype " + std::string(data_type_name(c.dtype)) + " not FP32/BF16/FP16");
  const int64_t m = opt.trans_a ? a.cols : a.rows;
  const int64_t k = opt.trans_a ? a.rows : a.cols;
  const int64_t kb = opt.trans_b ? b.cols : b.rows;
  const int64_t n = opt.trans_b ? b.rows : b.cols;
  if (k != kb)
    return invalid_argument("matmul: inner dims differ: op(A) is " + std::to_string(m) + "x" + std::to_string(k) +
                            ", op(B) is " + std::to_string(kb) + "x" + std::to_string(n));
  if (c.rows != m || c.cols != n)
    return invalid_argument("matmul: C is " + dims(c) + ", op(A)·op(B) is " + std::to_string(m) + "x" +
                            std::to_string(n));
  if (m == 0 || n == 0) return Status::Ok();
  ensure_single_threaded_math();

  Operand oa = operand(a, scratch_a);
  Operand ob = operand(b, scratch_b);
  const bool ta = opt.trans_a != oa.transposed;
  const bool tb = opt.trans_b != ob.transposed;
  const float beta = opt.accumulate ? 1.0f : 0.0f;

  const bool direct_c = c.dtype == DataType::FP32 && c.col_stride == 1 && (c.rows <= 1 || c.row_stride >= c.cols);
  float* cp;
  int ldc;
  if (direct_c) {
    cp = static_cast<float*>(c.data);
    ldc = static_cast<int>(c.rows > 1 ? c.row_stride : n);
  } else {
    if (opt.accumulate)
      load(c, scratch_c);
    else
      scratch_c.resize(m, n);
    cp = scratch_c.data();
    ldc = static_cast<int>(n);
  }
  if (k == 0) {
    // BLAS quick-returns on k == 0 without applying beta; C = 0·C is ours.
    if (!opt.accumulate)
      for (int64_t r = 0; r < m; ++r) std::fill(cp + r * ldc, cp + r * ldc + n, 0.0f);
  } else {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
                static_cast<int>(n), static_cast<int>(k), 1.0f, oa.data, oa.ld, ob.data, ob.ld, beta, cp, ldc);
  }
  if (!direct_c) store(scratch_c, c);
  return Status::Ok();
}

Status matmul(const ChipTensor& a, const ChipTensor& b, const ChipTensor& c, const MatmulOptions& opt) {
  Expected<View2D> va = view_2d(a);
  if (!va.ok()) return va.status().with_context("matmul: A");
  Expected<View2D> vb = view_2d(b);
  if (!vb.ok()) return vb.status().with_context("matmul: B");
  Expected<View2D> vc = view_2d(c);
  if (!vc.ok()) return vc.status().with_context("matmul: C");
  return matmul(*va, *vb, *vc, opt);
}

namespace {
View2D tile_view(const Tile& t) {
  View2D v;
  v.data = const_cast<float*>(t.data());
  v.rows = t.rows();
  v.cols = t.cols();
  v.row_stride = t.cols();
  return v;
}
}  // namespace

void matmul(const Tile& a, const Tile& b, Tile& c, const MatmulOptions& opt) {
  if (!opt.accumulate) c.resize(opt.trans_a ? a.cols() : a.rows(), opt.trans_b ? b.rows() : b.cols());
  Status s = matmul(tile_view(a), tile_view(b), tile_view(c), opt);
  (void)s;  // shapes are a precondition of this overload
}

}  // namespace taskring::tile
