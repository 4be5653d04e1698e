// matmul: C = op(A)·op(B) or C += op(A)·op(B).
#include "builtin_util.hpp"
#include "taskring/kernels/builtin.hpp"

namespace taskring::kernels {

extern "C" void taskring_builtin_matmul(int64_t* raw) {
  KernelArgs k(raw, "matmul");
  if (!k.usable() || !k.expect_counts(3, 3, 0, 3)) return;
  tile::View2D a, b, c;
  if (!k.view(0, "A", &a) || !k.view(1, "B", &b) || !k.view(2, "C", &c)) return;
  tile::MatmulOptions opt;
  opt.accumulate = k.scalar(0) != 0;
  opt.trans_a = k.scalar(1) != 0;
  opt.trans_b = k.scalar(2) != 0;
  Status s = tile::matmul(a, b, c, opt);
  if (!s.ok()) k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "%s", s.message().c_str());
}

}  // namespace taskring::kernels
