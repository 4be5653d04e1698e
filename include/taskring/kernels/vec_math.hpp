// Vector math over contiguous FP32 arrays, compiled for several instruction
// sets and picked at run time by CPU features.
//
// The project builds for baseline x86-64 (SSE2) so that one binary runs on
// every machine; the transcendental kernels (exp and what is built on it)
// are compute-bound, so they are the ones worth compiling three times. The
// same source (src/kernels/vec_math_body.inc, GCC vector extensions) is
// instantiated for:
//
//   kPortable  4 lanes, baseline SSE2 (runs everywhere; the fallback)
//   kAvx2      8 lanes, AVX2 + FMA
//   kAvx512   16 lanes, AVX-512 F/VL/DQ/BW
//
// active() picks the widest level the CPU supports (__builtin_cpu_supports)
// once. The tests run every level the test machine supports against a
// scalar double reference (tests/kernels/vec_math_test.cpp), so the portable
// path is tested wherever the tests run, not only on old CPUs.
//
// Accuracy (all levels; documented in docs/kernels.md §5): exp, sigmoid,
// silu and the softmax pieces ≤ 2e-7 relative (a few ulp); gelu ≤ 2e-7
// relative + 1e-7·|x| absolute; rsqrt is IEEE sqrt then IEEE division.
// Special values follow tile_ops.hpp: exp(+Inf) = +Inf, exp(-Inf) = 0 with
// gradual underflow below -87, NaN in → NaN out; sigmoid/silu/gelu return
// their limits at ±Inf; rsqrt(0) = +Inf, rsqrt(<0) = NaN. sigmoid and silu
// return ±0 once e^-x overflows (x < -88.7, true |value| < 1.2e-36).
//
// Every function accepts n == 0 and exact in-place use (y == x); partially
// overlapping arrays are undefined. Thread-safe: no state besides the
// one-time level choice.
#pragma once

#include <cstddef>
#include <string_view>

namespace taskring::vec {

enum class Level { kPortable = 0, kAvx2 = 1, kAvx512 = 2 };

// The kernels of one instruction-set level. Pointers are never null.
struct Kernels {
  Level level;
  // y[i] = f(x[i]).
  void (*exp)(const float* x, float* y, size_t n);
  void (*sigmoid)(const float* x, float* y, size_t n);
  void (*silu)(const float* x, float* y, size_t n);
  void (*gelu)(const float* x, float* y, size_t n);
  void (*rsqrt)(const float* x, float* y, size_t n);
  // max_i x[i], NaN if any x[i] is NaN, -Inf when n == 0.
  float (*max)(const float* x, size_t n);
  // y[i] = exp(x[i] - shift); returns Σ y[i] (FP32 lanes, then summed).
  float (*exp_shift_sum)(const float* x, float shift, float* y, size_t n);
  // y[i] = x[i] * s.
  void (*scale)(const float* x, float s, float* y, size_t n);
  // Σ x[i]² (FP32 lanes).
  float (*sum_squares)(const float* x, size_t n);
  // y[i] = (x[i] * s) * w[i]   (rmsnorm's normalise-and-weight step).
  void (*scale_mul)(const float* x, float s, const float* w, float* y, size_t n);
  // y[i] = silu(g[i]) * u[i].
  void (*swiglu)(const float* g, const float* u, float* y, size_t n);
  // Rotation of pairs (a[i], b[i]) by (c[i], s[i]):
  //   ya[i] = a[i]·c[i] − b[i]·s[i],  yb[i] = b[i]·c[i] + a[i]·s[i].
  // ya may be a and yb may be b (in place).
  void (*rotate)(const float* a, const float* b, const float* c, const float* s, float* ya, float* yb, size_t n);
};

// The kernels of the widest level this CPU supports (chosen on first call).
const Kernels& active();

// The kernels of `level`, or nullptr when this CPU cannot run them.
const Kernels* for_level(Level level);

std::string_view level_name(Level level);  // "portable(sse2)", "avx2+fma", "avx512"

}  // namespace taskring::vec
