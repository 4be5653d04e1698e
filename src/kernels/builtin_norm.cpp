// rmsnorm, softmax (rows), rope.
#include <cmath>

#include "builtin_util.hpp"
#include "taskring/kernels/builtin.hpp"
#include "taskring/kernels/vec_math.hpp"

namespace taskring::kernels {

using tile::View2D;

extern "C" void taskring_builtin_rmsnorm(int64_t* raw) {
  KernelArgs k(raw, "rmsnorm");
  if (!k.usable() || !k.expect_counts(3, 3, 1, 1)) return;
  View2D x, w, o;
  if (!k.view(0, "x", &x) || !k.view(1, "weight", &w) || !k.view(2, "out", &o)) return;
  if (!detail::check_float(k, x, "x") || !detail::check_float(k, w, "weight") || !detail::check_float(k, o, "out"))
    return;
  if (!detail::check_same_shape(k, x, "x", o, "out")) return;
  if (w.rows != 1 || w.cols != x.cols)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "weight is %lldx%lld, expected [%lld] (x is %lldx%lld)",
                        static_cast<long long>(w.rows), static_cast<long long>(w.cols), static_cast<long long>(x.cols),
                        static_cast<long long>(x.rows), static_cast<long long>(x.cols));
  const float eps = k.scalar_f32(0);
  if (!(eps >= 0.0f)) return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "eps %g must be >= 0", eps);
  const vec::Kernels& vk = vec::active();
  const float inv_d = x.cols > 0 ? 1.0f / static_cast<float>(x.cols) : 0.0f;
  const size_t n = static_cast<size_t>(x.cols);
  auto& s = detail::scratch();
  const float* wp;
  if (w.dtype == DataType::FP32 && w.unit_col_stride()) {
    wp = static_cast<const float*>(w.data);
  } else {
    tile::load(w, s.t[1]);
    wp = s.t[1].data();
  }
  if (detail::flat_f32(x) && detail::flat_f32(o)) {  // in place on the tensors, no tile copy
    for (int64_t r = 0; r < x.rows; ++r) {
      const float* xr = static_cast<const float*>(x.at(r, 0));
      const float inv_rms = 1.0f / std::sqrt(vk.sum_squares(xr, n) * inv_d + eps);
      vk.scale_mul(xr, inv_rms, wp, static_cast<float*>(o.at(r, 0)), n);
    }
    return;
  }
  tile::Tile& t = s.t[0];
  tile::load(x, t);
  for (Eigen::Index r = 0; r < t.rows(); ++r) {
    float* row = t.row(r).data();
    const float inv_rms = 1.0f / std::sqrt(vk.sum_squares(row, n) * inv_d + eps);
    vk.scale_mul(row, inv_rms, wp, row, n);
  }
  tile::store(t, o);
}

extern "C" void taskring_builtin_softmax(int64_t* raw) {
  KernelArgs k(raw, "softmax");
  if (!k.usable() || !k.expect_counts(2, 2, 0, 0)) return;
  View2D x, o;
  if (!k.view(0, "x", &x) || !k.view(1, "out", &o)) return;
  if (!detail::check_float(k, x, "x") || !detail::check_float(k, o, "out")) return;
  if (!detail::check_same_shape(k, x, "x", o, "out")) return;
  // Per row: m = max, y = exp(x − m), y /= Σy (as y · (1/Σy)).
  const vec::Kernels& vk = vec::active();
  const size_t n = static_cast<size_t>(x.cols);
  auto row = [&](const float* in, float* out) {
    const float sum = vk.exp_shift_sum(in, vk.max(in, n), out, n);
    vk.scale(out, 1.0f / sum, out, n);
  };
  if (detail::flat_f32(x) && detail::flat_f32(o)) {
    for (int64_t r = 0; r < x.rows; ++r) row(static_cast<const float*>(x.at(r, 0)), static_cast<float*>(o.at(r, 0)));
    return;
  }
  auto& s = detail::scratch();
  tile::Tile& t = s.t[0];
  tile::load(x, t);
  for (Eigen::Index r = 0; r < t.rows(); ++r) row(t.row(r).data(), t.row(r).data());
  tile::store(t, o);
}

namespace {

// A rank-2 [T, D] or rank-3 [T, H, D] tensor addressed by (token, head, d).
struct View3 {
  char* data;
  DataType dtype;
  int64_t t, h, d;
  int64_t st, sh, sd;
  size_t es;
  char* at(int64_t i, int64_t j, int64_t c) const {
    return data + (i * st + j * sh + c * sd) * static_cast<int64_t>(es);
  }
};

bool view3(const KernelArgs& k, int i, const char* role, View3* out) {
  const ChipTensor* t = k.tensor(i, role);
  if (t == nullptr) return false;
  if (t->ndims != 2 && t->ndims != 3)
    return k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT,
                  "%s must be [tokens, head_dim] or [tokens, heads, head_dim], got rank %u", role, t->ndims);
  if (!detail::is_float_dtype(t->dtype))
    return k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "%s dtype %s is not FP32/BF16/FP16", role,
                  std::string(data_type_name(t->dtype)).c_str());
  View3 v{t->data<char>(),          t->dtype,      t->shapes[0], 1, t->shapes[t->ndims - 1], t->strides[0], 0,
          t->strides[t->ndims - 1], t->elem_size()};
  if (t->ndims == 3) {
    v.h = t->shapes[1];
    v.sh = t->strides[1];
  }
  *out = v;
  return true;
}

}  // namespace

extern "C" void taskring_builtin_rope(int64_t* raw) {
  KernelArgs k(raw, "rope");
  if (!k.usable() || !k.expect_counts(5, 5, 0, 1)) return;
  View3 x, o;
  View2D cs, sn, pos;
  if (!view3(k, 0, "x", &x) || !k.view(1, "cos", &cs) || !k.view(2, "sin", &sn) || !k.view(3, "positions", &pos) ||
      !view3(k, 4, "out", &o))
    return;
  const uint64_t mode = k.scalar(0);
  if (mode > 1)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "mode %llu: 0 rotate-half, 1 interleaved",
                        static_cast<unsigned long long>(mode));
  if (x.t != o.t || x.h != o.h || x.d != o.d)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "out shape differs from x shape");
  if (x.d % 2 != 0)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "head_dim %lld is odd", static_cast<long long>(x.d));
  const int64_t half = x.d / 2;
  if (!detail::check_float(k, cs, "cos") || !detail::check_float(k, sn, "sin")) return;
  if (cs.cols != half || sn.cols != half || sn.rows != cs.rows)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT,
                        "cos is %lldx%lld, sin is %lldx%lld, expected [max_pos, %lld]", static_cast<long long>(cs.rows),
                        static_cast<long long>(cs.cols), static_cast<long long>(sn.rows),
                        static_cast<long long>(sn.cols), static_cast<long long>(half));
  if (!detail::check_dtype(k, pos, "positions", DataType::INT32)) return;
  if (pos.numel() != x.t)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "positions has %lld entries for %lld tokens",
                        static_cast<long long>(pos.numel()), static_cast<long long>(x.t));
  auto position = [&](int64_t i) {
    int32_t p;
    std::memcpy(&p, pos.rows == 1 ? pos.at(0, i) : pos.at(i, 0), 4);
    return p;
  };
  for (int64_t i = 0; i < x.t; ++i) {
    const int32_t p = position(i);
    if (p < 0 || p >= cs.rows)
      return (void)k.fail(TASKRING_KERNEL_ERR_OUT_OF_RANGE, "positions[%lld] = %d outside table rows 0..%lld",
                          static_cast<long long>(i), p, static_cast<long long>(cs.rows - 1));
  }
  // FP32 rotate-half with contiguous head dims and tables: the pairs are two
  // contiguous half-rows, rotated by vec_math.
  if (mode == 0 && x.dtype == DataType::FP32 && o.dtype == DataType::FP32 && x.sd == 1 && o.sd == 1 &&
      cs.dtype == DataType::FP32 && sn.dtype == DataType::FP32 && cs.unit_col_stride() && sn.unit_col_stride()) {
    const vec::Kernels& vk = vec::active();
    for (int64_t i = 0; i < x.t; ++i) {
      const int32_t p = position(i);
      const float* c = static_cast<const float*>(cs.at(p, 0));
      const float* sp = static_cast<const float*>(sn.at(p, 0));
      for (int64_t j = 0; j < x.h; ++j) {
        const float* x1 = reinterpret_cast<const float*>(x.at(i, j, 0));
        float* y1 = reinterpret_cast<float*>(o.at(i, j, 0));
        vk.rotate(x1, x1 + half, c, sp, y1, y1 + half, static_cast<size_t>(half));
      }
    }
    return;
  }
  for (int64_t i = 0; i < x.t; ++i) {
    const int32_t p = position(i);
    for (int64_t j = 0; j < x.h; ++j) {
      for (int64_t c = 0; c < half; ++c) {
        const int64_t i1 = mode == 0 ? c : 2 * c;
        const int64_t i2 = mode == 0 ? c + half : 2 * c + 1;
        const float x1 = tile::read_as_float(x.at(i, j, i1), x.dtype);
        const float x2 = tile::read_as_float(x.at(i, j, i2), x.dtype);
        const float co = tile::read_as_float(cs.at(p, c), cs.dtype);
        const float si = tile::read_as_float(sn.at(p, c), sn.dtype);
        tile::write_from_float(o.at(i, j, i1), o.dtype, x1 * co - x2 * si);
        tile::write_from_float(o.at(i, j, i2), o.dtype, x2 * co + x1 * si);
      }
    }
  }
}

}  // namespace taskring::kernels
