// The three instantiations of vec_math_body.inc and the run-time choice.
//
// Each level is a namespace compiled under its own `#pragma GCC target`, so
// one translation unit holds SSE2, AVX2+FMA and AVX-512 code and the build
// needs no per-file -m flags; only the chosen level's code ever executes.
// This file is compiled with -ffp-contract=fast (src/kernels/CMakeLists.txt)
// so that a·b + c becomes one FMA where the level has FMA.
#include "taskring/kernels/vec_math.hpp"

namespace taskring::vec {

namespace portable {
constexpr int kW = 4;
constexpr Level kLevel = Level::kPortable;
#define TASKRING_VEC_SQRT \
  static inline vf vsqrt(vf x) { return __builtin_ia32_sqrtps(x); }
#if !defined(__x86_64__) && !defined(__i386__)
#undef TASKRING_VEC_SQRT
#define TASKRING_VEC_SQRT                                      \
  static inline vf vsqrt(vf x) {                               \
    for (int i = 0; i < kW; ++i) x[i] = __builtin_sqrtf(x[i]); \
    return x;                                                  \
  }
#endif
#if defined(__x86_64__) || defined(__i386__)
#define TASKRING_VEC_MINMAX                                                \
  static inline vf vmax(vf a, vf b) { return __builtin_ia32_maxps(a, b); } \
  static inline vf vmin(vf a, vf b) { return __builtin_ia32_minps(a, b); }
#endif
#include "vec_math_body.inc"
#undef TASKRING_VEC_SQRT
#undef TASKRING_VEC_MINMAX
}  // namespace portable

#if defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
constexpr int kW = 8;
constexpr Level kLevel = Level::kAvx2;
#define TASKRING_VEC_SQRT \
  static inline vf vsqrt(vf x) { return __builtin_ia32_sqrtps256(x); }
#define TASKRING_VEC_MINMAX                                                   \
  static inline vf vmax(vf a, vf b) { return __builtin_ia32_maxps256(a, b); } \
  static inline vf vmin(vf a, vf b) { return __builtin_ia32_minps256(a, b); }
#include "vec_math_body.inc"
#undef TASKRING_VEC_SQRT
#undef TASKRING_VEC_MINMAX
}  // namespace avx2
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")
namespace avx512 {
constexpr int kW = 16;
constexpr Level kLevel = Level::kAvx512;
// _MM_FROUND_CUR_DIRECTION = 4: the current (round-to-nearest) mode.
#define TASKRING_VEC_SQRT \
  static inline vf vsqrt(vf x) { return __builtin_ia32_sqrtps512_mask(x, x, static_cast<unsigned short>(-1), 4); }
// vscalefps: p·2^n in one instruction, gradual underflow and overflow included.
#define TASKRING_VEC_SCALEF                                                              \
  static inline vf vscalef(vf p, vf n) {                                                 \
    return __builtin_ia32_scalefps512_mask(p, n, p, static_cast<unsigned short>(-1), 4); \
  }
#define TASKRING_VEC_MINMAX                                                           \
  static inline vf vmax(vf a, vf b) {                                                 \
    return __builtin_ia32_maxps512_mask(a, b, a, static_cast<unsigned short>(-1), 4); \
  }                                                                                   \
  static inline vf vmin(vf a, vf b) {                                                 \
    return __builtin_ia32_minps512_mask(a, b, a, static_cast<unsigned short>(-1), 4); \
  }
#include "vec_math_body.inc"
#undef TASKRING_VEC_SQRT
#undef TASKRING_VEC_SCALEF
#undef TASKRING_VEC_MINMAX
}  // namespace avx512
#pragma GCC pop_options
#endif

const Kernels* for_level(Level level) {
  switch (level) {
    case Level::kPortable: return &portable::kKernels;
#if defined(__x86_64__)
    case Level::kAvx2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? &avx2::kKernels : nullptr;
    case Level::kAvx512:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                     __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
                     __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
                 ? &avx512::kKernels
                 : nullptr;
#else
    default: return nullptr;
#endif
  }
  return nullptr;
}

const Kernels& active() {
  // Chosen once: the CPU does not change under a running process.
  static const Kernels* const chosen = [] {
    for (Level l : {Level::kAvx512, Level::kAvx2})
      if (const Kernels* k = for_level(l)) return k;
    return for_level(Level::kPortable);
  }();
  return *chosen;
}

std::string_view level_name(Level level) {
  switch (level) {
    case Level::kPortable: return "portable(sse2)";
    case Level::kAvx2: return "avx2+fma";
    case Level::kAvx512: return "avx512";
  }
  return "unknown";
}

}  // namespace taskring::vec
