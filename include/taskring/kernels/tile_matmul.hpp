// Tile matmul: C = op(A)·op(B) or C += op(A)·op(B), FP32 accumulation.
//
// Built on OpenBLAS cblas_sgemm, single-threaded (docs/kernels.md has the
// Eigen-vs-OpenBLAS measurement behind that choice). FP32 operands whose
// rows or columns are contiguous go to sgemm in place; BF16/FP16 operands
// and other strides are first widened/packed into a per-thread FP32 scratch
// tile, so the products are exact-input FP32 products in every case.
#pragma once

#include <string>

#include "taskring/base/status.hpp"
#include "taskring/kernels/tile_view.hpp"

namespace taskring::tile {

struct MatmulOptions {
  bool accumulate = false;  // C += ... instead of C = ...
  bool trans_a = false;     // op(A) = Aᵀ
  bool trans_b = false;     // op(B) = Bᵀ
};

// op(A) is M x K, op(B) is K x N, C is M x N. A and B: FP32, BF16 or FP16
// (may differ); C: FP32, BF16 or FP16 (accumulated in FP32, stored with the
// rounding of tile_cast.hpp). Errors: INVALID_ARGUMENT naming the operand for
// a dtype outside those or mismatched shapes.
Status matmul(const View2D& a, const View2D& b, const View2D& c, const MatmulOptions& opt = {});
Status matmul(const ChipTensor& a, const ChipTensor& b, const ChipTensor& c, const MatmulOptions& opt = {});

// Tile form: c = op(a)·op(b) (or +=); c is resized when !accumulate.
// Precondition: shapes agree.
void matmul(const Tile& a, const Tile& b, Tile& c, const MatmulOptions& opt = {});

// Makes sure the BLAS library runs in the calling thread only (kernels run
// one per core thread). Idempotent and cheap after the first call; the
// matmul functions call it themselves.
void ensure_single_threaded_math();

// The BLAS library behind matmul and the CPU kernel set it picked when it
// loaded. OpenBLAS picks by CPU model; a model newer than the library (for
// example an Emerald Rapids Xeon under OpenBLAS 0.3.21) gets the generic
// SSE3 "Prescott" kernels, and OPENBLAS_CORETYPE, set before the library
// loads, is the only way to choose others. The `taskring` tool sets it and
// re-executes itself (tools/taskring/main.cpp); a program that links the
// library can read `advice`.
struct BlasInfo {
  std::string config;  // openblas_get_config(): version and build options
  std::string core;    // openblas_get_corename(), e.g. "SkylakeX", "Zen", "Prescott"
  // When `core` is a generic fallback on a CPU whose vector units a better
  // kernel set uses: that set's OPENBLAS_CORETYPE name ("SkylakeX" for
  // AVX-512 F/BW/DQ/VL, "Haswell" for AVX2+FMA) and a sentence saying what
  // to do. Both empty otherwise.
  std::string better_core;
  std::string advice;
};
BlasInfo blas_info();

}  // namespace taskring::tile
