// add, add_scalar, mul, copy, cast, swiglu.
#include <cstring>

#include "builtin_util.hpp"
#include "taskring/kernels/builtin.hpp"
#include "taskring/kernels/vec_math.hpp"

namespace taskring::kernels {

using detail::check_same_shape;
using tile::View2D;

namespace {

// add and mul accept (and ignore) one trailing scalar: upstream's example
// kernels of the same name are passed one (a tile count or a spin hint).
void binary_kernel(int64_t* raw, const char* name, tile::BinaryOp op) {
  KernelArgs k(raw, name);
  if (!k.usable() || !k.expect_counts(3, 3, 0, 1)) return;
  View2D a, b, o;
  if (!k.view(0, "a", &a) || !k.view(1, "b", &b) || !k.view(2, "out", &o)) return;
  if (!check_same_shape(k, a, "a", b, "b") || !check_same_shape(k, a, "a", o, "out")) return;
  if (a.dtype == DataType::FP32 && b.dtype == DataType::FP32 && o.dtype == DataType::FP32) {
    if (a.unit_col_stride() && b.unit_col_stride() && o.unit_col_stride())
      tile::binary(op, tile::cmap_f32(a), tile::cmap_f32(b), tile::map_f32(o));
    else
      tile::binary(op, tile::cmap_f32_strided(a), tile::cmap_f32_strided(b), tile::map_f32_strided(o));
    return;
  }
  auto& s = detail::scratch();
  tile::load(a, s.t[0]);
  tile::load(b, s.t[1]);
  tile::binary(op, s.t[0], s.t[1], s.t[0]);
  tile::store(s.t[0], o);
}

}  // namespace

extern "C" void taskring_builtin_add(int64_t* args) { binary_kernel(args, "add", tile::BinaryOp::kAdd); }
extern "C" void taskring_builtin_mul(int64_t* args) { binary_kernel(args, "mul", tile::BinaryOp::kMul); }

extern "C" void taskring_builtin_add_scalar(int64_t* raw) {
  KernelArgs k(raw, "add_scalar");
  // A second scalar (upstream's example passes a tile count) is ignored.
  if (!k.usable() || !k.expect_counts(2, 2, 1, 2)) return;
  View2D a, o;
  if (!k.view(0, "a", &a) || !k.view(1, "out", &o)) return;
  if (!check_same_shape(k, a, "a", o, "out")) return;
  const float s = k.scalar_f32(0);
  if (a.dtype == DataType::FP32 && o.dtype == DataType::FP32) {
    if (a.unit_col_stride() && o.unit_col_stride())
      tile::binary(tile::BinaryOp::kAdd, tile::cmap_f32(a), s, tile::map_f32(o));
    else
      tile::binary(tile::BinaryOp::kAdd, tile::cmap_f32_strided(a), s, tile::map_f32_strided(o));
    return;
  }
  auto& sc = detail::scratch();
  tile::load(a, sc.t[0]);
  tile::binary(tile::BinaryOp::kAdd, sc.t[0], s, sc.t[0]);
  tile::store(sc.t[0], o);
}

extern "C" void taskring_builtin_copy(int64_t* raw) {
  KernelArgs k(raw, "copy");
  if (!k.usable() || !k.expect_counts(2, 2, 0, 0)) return;
  View2D s, d;
  if (!k.view(0, "src", &s, /*tile_dtype=*/false) || !k.view(1, "dst", &d, false)) return;
  if (!check_same_shape(k, s, "src", d, "dst")) return;
  if (s.dtype != d.dtype)
    return (void)k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "src dtype %s differs from dst dtype %s (use cast)",
                        std::string(data_type_name(s.dtype)).c_str(), std::string(data_type_name(d.dtype)).c_str());
  const size_t es = s.elem_size();
  for (int64_t r = 0; r < s.rows; ++r) {
    if (s.col_stride == 1 && d.col_stride == 1) {
      std::memmove(d.at(r, 0), s.at(r, 0), es * s.cols);
    } else {
      for (int64_t c = 0; c < s.cols; ++c) std::memmove(d.at(r, c), s.at(r, c), es);
    }
  }
}

extern "C" void taskring_builtin_cast(int64_t* raw) {
  KernelArgs k(raw, "cast");
  if (!k.usable() || !k.expect_counts(2, 2, 0, 0)) return;
  View2D s, d;
  if (!k.view(0, "src", &s) || !k.view(1, "dst", &d)) return;
  if (!check_same_shape(k, s, "src", d, "dst")) return;
  tile::cast(s, d);
}

extern "C" void taskring_builtin_swiglu(int64_t* raw) {
  KernelArgs k(raw, "swiglu");
  if (!k.usable() || !k.expect_counts(3, 3, 0, 0)) return;
  View2D g, u, o;
  if (!k.view(0, "gate", &g) || !k.view(1, "up", &u) || !k.view(2, "out", &o)) return;
  if (!check_same_shape(k, g, "gate", u, "up") || !check_same_shape(k, g, "gate", o, "out")) return;
  if (!detail::check_float(k, g, "gate") || !detail::check_float(k, u, "up") || !detail::check_float(k, o, "out"))
    return;
  const vec::Kernels& vk = vec::active();
  const size_t n = static_cast<size_t>(g.cols);
  if (detail::flat_f32(g) && detail::flat_f32(u) && detail::flat_f32(o)) {
    for (int64_t r = 0; r < g.rows; ++r)
      vk.swiglu(static_cast<const float*>(g.at(r, 0)), static_cast<const float*>(u.at(r, 0)),
                static_cast<float*>(o.at(r, 0)), n);
    return;
  }
  auto& s = detail::scratch();
  tile::load(g, s.t[0]);
  tile::load(u, s.t[1]);
  for (Eigen::Index r = 0; r < s.t[0].rows(); ++r)
    vk.swiglu(s.t[0].row(r).data(), s.t[1].row(r).data(), s.t[0].row(r).data(), n);
  tile::store(s.t[0], o);
}

}  // namespace taskring::kernels
