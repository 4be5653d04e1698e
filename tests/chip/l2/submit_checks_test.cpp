// check_submit decides the common case on a fast path (no message built)
// and everything else with the full rules. The two must agree: over random
// submissions, good and bad in every rule, the verdict with the device's
// linear window (fast path eligible) equals the verdict without it (full
// rules only), and so do the error code and shape.
#include <gtest/gtest.h>

#include <random>

#include "l2/submit_checks.hpp"
#include "taskring/device/sim_device.hpp"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::l2 {
namespace {

void fake_kernel(int64_t*) {}

class SubmitChecks : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dev = create_sim_device(SimDeviceConfig());
    ASSERT_TRUE(dev.ok()) << dev.status().to_string();
    device = std::move(dev).value();
    auto addr = device->malloc(4096, 64, "submit checks");
    ASSERT_TRUE(addr.ok());
    base = *addr;
    for (auto& k : kernels) k = nullptr;
    kernels[1] = &fake_kernel;
    kernels[2] = &fake_kernel;
    policy.kernels = kernels;
    policy.device = device.get();
    policy.topology = device->topology();
  }
  void TearDown() override {
    if (device) (void)device->free(base);
  }

  // A 1-D FP32 view of `elems` elements at element `offset`, then broken
  // in the way `flaw` says (0: not at all).
  ChipTensor tensor(std::mt19937_64& rng, int flaw) {
    uint32_t shape = 1 + static_cast<uint32_t>(rng() % 64);
    ChipTensor t = *try_make_tensor(base, 4096, std::span<const uint32_t>(&shape, 1), DataType::FLOAT32, false, 0,
                                    AddressSpace::DEVICE);
    switch (flaw) {
      case 1: t.buffer.addr = 0x1000; break;                   // not a device address
      case 2: t.strides[0] = 0; break;                         // zero stride
      case 3: t.shapes[0] = 4096; break;                       // beyond its buffer
      case 4: t.ndims = 0; break;                              // bad rank
      case 5: t.dtype = static_cast<DataType>(200); break;     // bad dtype
      case 6: t.start_offset = 1020; break;                    // runs past the end
      default: break;
    }
    return t;
  }

  std::unique_ptr<Device> device;
  DeviceAddr base = 0;
  taskring_kernel_fn kernels[TASKRING_MAX_FUNC_ID];
  SubmitPolicy policy;
};

TEST_F(SubmitChecks, FastPathAgreesWithTheFullRules) {
  std::mt19937_64 rng(20261206);
  SubmitPolicy slow = policy;  // no window: every submission takes the full rules
  SubmitPolicy fast = policy;
  fast.window = device->linear_window();
  ASSERT_NE(fast.window.bytes, 0u) << "sim has a linear window: the fast path is what this test exercises";
  int accepted = 0, rejected = 0;
  for (int round = 0; round < 4000; ++round) {
    std::vector<ChipTensor> tensors;
    const int nt = static_cast<int>(rng() % 4);
    for (int i = 0; i < nt; ++i) tensors.push_back(tensor(rng, rng() % 4 == 0 ? static_cast<int>(rng() % 7) : 0));
    CoreTaskArgs args;
    for (auto& t : tensors) {
      switch (rng() % 4) {
        case 0: args.add_input(t); break;
        case 1: args.add_inout(t); break;
        case 2: args.add_output(t); break;
        default: args.add_no_dep(t); break;
      }
    }
    if (rng() % 8 == 0) args.launch_spec.set_blocks(static_cast<int16_t>(static_cast<int>(rng() % 4) - 1));
    if (rng() % 8 == 0) {
      args.launch_spec.set_require_sync_start(true);
      args.launch_spec.set_blocks(static_cast<int16_t>(rng() % 2 == 0 ? 2 : 64));
    }
    MixedKernels k;
    const int32_t ids[] = {INVALID_KERNEL_ID, 1, 2, 3, -5, TASKRING_MAX_FUNC_ID};
    k.aic_kernel_id = ids[rng() % 6];
    k.aiv0_kernel_id = ids[rng() % 6];
    k.aiv1_kernel_id = rng() % 3 == 0 ? ids[rng() % 6] : INVALID_KERNEL_ID;
    const SubmitKind kind = rng() % 6 == 0 ? SubmitKind::kDummy : SubmitKind::kKernel;
    const bool in_scope = rng() % 16 != 0;

    TaskShape fast_shape = TaskShape::kDummy, slow_shape = TaskShape::kDummy;
    SubmitError fast_error, slow_error;
    const bool fast_ok = check_submit(kind, in_scope, k, args, fast, &fast_shape, &fast_error);
    const bool slow_ok = check_submit(kind, in_scope, k, args, slow, &slow_shape, &slow_error);
    ASSERT_EQ(fast_ok, slow_ok) << "round " << round << ": fast " << fast_error.message << " / full "
                                << slow_error.message;
    if (fast_ok) {
      EXPECT_EQ(fast_shape, slow_shape) << "round " << round;
      ++accepted;
    } else {
      EXPECT_EQ(fast_error.code, slow_error.code) << "round " << round;
      EXPECT_EQ(fast_error.message, slow_error.message) << "round " << round;
      ++rejected;
    }
  }
  // Both verdicts occur often enough for the comparison to mean something.
  EXPECT_GT(accepted, 400);
  EXPECT_GT(rejected, 400);
}

}  // namespace
}  // namespace taskring::l2
