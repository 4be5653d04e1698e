// Randomized bad arguments through the C ABI (c_api.h), on both runtimes:
// null pointers, bad ranks, dtypes and shapes (zero, huge, wrapping), bad
// tags, garbage descriptors, counts over capacity and negative, unknown
// callable and kernel ids, calls out of order, device addresses and sizes
// out of range or overflowing. Every call must return a non-zero code equal
// to err.code with a message, never crash, hang or leak (ASan), and the
// worker must then still run a good program.
//
// Seeded: TASKRING_TEST_SEED=<n> replays; the seed is in every failure.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "pto_orchestration_api.h"
#include "taskring/c_api.h"
#include "taskring/kernels/builtin_ids.hpp"
#include "test_scale.hpp"

namespace {

namespace bid = taskring::kernels::builtin_id;

// f = a + 1 (FP32), one task.
extern "C" void capi_bad_args_entry(const ChipTaskArgs& args) {
  CoreTaskArgs t;
  t.add_input(*args.tensor(0)).add_output(*args.tensor(1)).add_scalar(1.0f);
  rt_submit_aiv_task(bid::kAddScalar, t);
}

uint64_t test_seed() {
  const char* v = std::getenv("TASKRING_TEST_SEED");
  return v != nullptr ? std::strtoull(v, nullptr, 10) : 20261203ull;
}

class CApiBadArgs : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    ASSERT_EQ(taskring_worker_create("sim", GetParam(), &w_, &err_), TASKRING_OK) << err_.message;
    taskring_callable_desc desc{};
    desc.name = "capi_bad_args";
    desc.entry = reinterpret_cast<void*>(&capi_bad_args_entry);
    ASSERT_EQ(taskring_register_callable(w_, &desc, &id_, &err_), TASKRING_OK) << err_.message;
    const uint32_t shape[1] = {64};
    ASSERT_EQ(taskring_make_tensor(reinterpret_cast<uint64_t>(a_.data()), shape, 1, 0, 0, &ta_, &err_), TASKRING_OK);
    ASSERT_EQ(taskring_make_tensor(reinterpret_cast<uint64_t>(f_.data()), shape, 1, 0, 0, &tf_, &err_), TASKRING_OK);
  }
  void TearDown() override { taskring_worker_destroy(w_); }

  // The worker still runs the good program.
  void expect_still_good() {
    std::fill(f_.begin(), f_.end(), 0.0f);
    taskring_arg args[2] = {{&ta_, TASKRING_ARG_INPUT}, {&tf_, TASKRING_ARG_OUTPUT_EXISTING}};
    taskring_run_report report;
    ASSERT_EQ(taskring_run(w_, id_, args, 2, nullptr, 0, &report, &err_), TASKRING_OK)
        << "the worker must stay usable: " << err_.message;
    for (float v : f_) ASSERT_EQ(v, 3.0f);
  }

  // One random bad call; returns its description. `rc` and the error it
  // filled are checked by the caller.
  std::string bad_call(std::mt19937_64& g, int32_t* rc, taskring_error* err);

  taskring_worker* w_ = nullptr;
  int32_t id_ = -1;
  taskring_error err_{};
  std::vector<float> a_ = std::vector<float>(64, 2.0f), f_ = std::vector<float>(64, 0.0f);
  taskring_tensor ta_{}, tf_{};
};

std::string CApiBadArgs::bad_call(std::mt19937_64& g, int32_t* rc, taskring_error* err) {
  const uint64_t host = reinterpret_cast<uint64_t>(a_.data());
  switch (g() % 14) {
    case 0: {  // rank outside 1..5
      uint32_t shapes[16];
      for (uint32_t& s : shapes) s = 4;
      uint32_t nd = (g() % 2 == 0) ? 0 : 6 + static_cast<uint32_t>(g() % 11);
      taskring_tensor t;
      *rc = taskring_make_tensor(host, shapes, nd, 0, 0, &t, err);
      return "make_tensor ndims " + std::to_string(nd);
    }
    case 1: {  // dtype that is no DataType
      const int32_t bad[] = {-1, -100000, 200, 255, 256, 4096, INT32_MAX, INT32_MIN};
      int32_t dt = bad[g() % (sizeof(bad) / sizeof(bad[0]))];
      uint32_t shapes[1] = {4};
      taskring_tensor t;
      *rc = taskring_make_tensor(host, shapes, 1, dt, 0, &t, err);
      return "make_tensor dtype " + std::to_string(dt);
    }
    case 2: {  // sizes past 64 bits or past the address space
      const std::vector<std::vector<uint32_t>> shapes = {{1u << 20, 1u << 20, 1u << 20},
                                                         {1u << 16, 1u << 16, 1u << 16, 1u << 16},
                                                         {1u << 31, 1u << 31, 4},
                                                         {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 7}};
      const auto& s = shapes[g() % shapes.size()];
      taskring_tensor t;
      *rc = taskring_make_tensor(host, s.data(), static_cast<uint32_t>(s.size()), 0, 0, &t, err);
      return "make_tensor of " + std::to_string(s.size()) + " huge extents";
    }
    case 3: {  // null pointers
      uint32_t shapes[1] = {4};
      taskring_tensor t;
      bool null_shapes = g() % 2 == 0;
      *rc = taskring_make_tensor(host, null_shapes ? nullptr : shapes, 1, 0, 0, null_shapes ? &t : nullptr, err);
      return null_shapes ? "make_tensor null shapes" : "make_tensor null out";
    }
    case 4: {  // bad tag
      int32_t tag = (g() % 3 == 0) ? 1 : 5 + static_cast<int32_t>(g() % 1000);
      if (g() % 5 == 0) tag = -1 - static_cast<int32_t>(g() % 1000);
      taskring_arg args[2] = {{&ta_, tag}, {&tf_, TASKRING_ARG_OUTPUT_EXISTING}};
      *rc = taskring_prepare(w_, id_, args, 2, nullptr, 0, err);
      return "prepare tag " + std::to_string(tag);
    }
    case 5: {  // null tensor, null arrays, negative counts
      taskring_arg args[2] = {{nullptr, TASKRING_ARG_INPUT}, {&tf_, TASKRING_ARG_OUTPUT_EXISTING}};
      switch (g() % 4) {
        case 0: *rc = taskring_prepare(w_, id_, args, 2, nullptr, 0, err); return "prepare null tensor";
        case 1: *rc = taskring_prepare(w_, id_, nullptr, 2, nullptr, 0, err); return "prepare null args, 2";
        case 2:
          *rc = taskring_prepare(w_, id_, args, -1 - static_cast<int32_t>(g() % 100), nullptr, 0, err);
          return "prepare negative n_args";
        default: *rc = taskring_prepare(w_, id_, args + 1, 1, nullptr, 3, err); return "prepare null scalars, 3";
      }
    }
    case 6: {  // counts over the entry capacity (256 tensors / 128 scalars)
      bool tensors = g() % 2 == 0;
      int32_t n = (tensors ? 256 : 128) + 1 + static_cast<int32_t>(g() % 64);
      std::vector<taskring_arg> args(static_cast<size_t>(n), taskring_arg{&ta_, TASKRING_ARG_INPUT});
      std::vector<uint64_t> scalars(static_cast<size_t>(n), 7);
      if (tensors)
        *rc = taskring_prepare(w_, id_, args.data(), n, nullptr, 0, err);
      else
        *rc = taskring_prepare(w_, id_, args.data(), 1, scalars.data(), n, err);
      return std::string("prepare ") + std::to_string(n) + (tensors ? " tensors" : " scalars");
    }
    case 7: {  // unknown callable id
      const int32_t ids[] = {-1, 1, 7, 1023, 1024, INT32_MAX, INT32_MIN};
      int32_t id = ids[g() % (sizeof(ids) / sizeof(ids[0]))];
      taskring_arg args[2] = {{&ta_, TASKRING_ARG_INPUT}, {&tf_, TASKRING_ARG_OUTPUT_EXISTING}};
      taskring_run_report report;
      *rc = (g() % 2 == 0) ? taskring_prepare(w_, id, args, 2, nullptr, 0, err)
                           : taskring_run(w_, id, args, 2, nullptr, 0, &report, err);
      return "callable id " + std::to_string(id);
    }
    case 8: {  // garbage descriptor bytes (address made wild: must be rejected, not read)
      taskring_tensor junk;
      for (auto& b : junk.bytes) b = static_cast<uint8_t>(g());
      uint64_t wild = 0xdead000000000000ull | (g() & 0xFFFFFFFFull);
      std::memcpy(junk.bytes, &wild, sizeof(wild));
      taskring_arg args[2] = {{&junk, TASKRING_ARG_INPUT}, {&tf_, TASKRING_ARG_OUTPUT_EXISTING}};
      taskring_run_report report;
      *rc = taskring_run(w_, id_, args, 2, nullptr, 0, &report, err);
      return "run with a garbage descriptor";
    }
    case 9: {  // calls out of order
      int32_t done = 0;
      taskring_run_report report;
      switch (g() % 4) {
        case 0: *rc = taskring_launch(w_, err); return "launch without prepare";
        case 1: *rc = taskring_finalize(w_, &report, err); return "finalize without launch";
        case 2: *rc = taskring_wait(w_, err); return "wait without launch";
        default: *rc = taskring_poll(w_, (g() % 2 == 0) ? &done : nullptr, err); return "poll without launch";
      }
    }
    case 10: {  // device sizes
      const uint64_t sizes[] = {0, 1ull << 62, UINT64_MAX, UINT64_MAX - 1023};
      uint64_t bytes = sizes[g() % (sizeof(sizes) / sizeof(sizes[0]))];
      uint64_t addr = 0;
      bool null_out = g() % 4 == 0;
      *rc = taskring_device_malloc(w_, null_out ? 1024 : bytes, null_out ? nullptr : &addr, err);
      return null_out ? std::string("device_malloc null out") : "device_malloc " + std::to_string(bytes);
    }
    case 11: {  // free of addresses never allocated
      uint64_t addr = (g() % 2 == 0) ? 0 : (g() | 1);
      *rc = taskring_device_free(w_, addr, err);
      return "device_free " + std::to_string(addr);
    }
    case 12: {  // copies out of bounds, overflowing or from null
      uint64_t dev = 0;
      taskring_error e2{};
      if (taskring_device_malloc(w_, 256, &dev, &e2) != TASKRING_OK) {
        *rc = e2.code != 0 ? e2.code : -1;
        std::snprintf(err->message, sizeof(err->message), "setup malloc failed: %s", e2.message);
        err->code = *rc;
        return "setup";
      }
      std::vector<uint8_t> buf(512);
      std::string what;
      switch (g() % 5) {
        case 0:
          *rc = taskring_copy_to_device(w_, dev, buf.data(), 257 + g() % 200, err);
          what = "copy_to_device past the end";
          break;
        case 1:
          *rc = taskring_copy_to_device(w_, dev + 8, buf.data(), UINT64_MAX - 4, err);
          what = "copy_to_device wrapping size";
          break;
        case 2:
          *rc = taskring_copy_from_device(w_, buf.data(), dev - 64, 128, err);
          what = "copy_from_device before the start";
          break;
        case 3:
          *rc = taskring_copy_to_device(w_, dev, nullptr, 16, err);
          what = "copy_to_device null src";
          break;
        default:
          *rc = taskring_copy_from_device(w_, nullptr, dev, 16, err);
          what = "copy_from_device null dst";
          break;
      }
      EXPECT_EQ(taskring_device_free(w_, dev, &e2), TASKRING_OK) << e2.message;
      return what;
    }
    default: {  // register_callable with bad kernels
      taskring_kernel_desc k{};
      taskring_callable_desc desc{};
      desc.name = "bad";
      desc.entry = reinterpret_cast<void*>(&capi_bad_args_entry);
      std::string what;
      switch (g() % 5) {
        case 0: {
          const int32_t ids[] = {-1, -1000, 1024, 5000, INT32_MAX};
          k.func_id = ids[g() % 5];
          k.fn = reinterpret_cast<taskring_kernel_fn>(&capi_bad_args_entry);
          desc.kernels = &k;
          desc.kernel_count = 1;
          what = "register kernel id " + std::to_string(k.func_id);
          break;
        }
        case 1:
          k.func_id = 3;
          desc.kernels = &k;
          desc.kernel_count = 1;
          what = "register kernel without fn or library";
          break;
        case 2:
          k.func_id = 3;
          k.library = "/nonexistent/libnothing.so";
          desc.kernels = &k;
          desc.kernel_count = 1;
          what = "register kernel from a missing library";
          break;
        case 3:
          desc.kernel_count = 1 + static_cast<int32_t>(g() % 10);
          what = "register null kernels, count " + std::to_string(desc.kernel_count);
          break;
        default:
          desc.entry = nullptr;
          what = "register without entry or library";
          break;
      }
      int32_t id = -1;
      *rc = taskring_register_callable(w_, &desc, &id, err);
      return what;
    }
  }
}

TEST_P(CApiBadArgs, EveryRandomBadCallIsAnErrorWithAMessage) {
  const uint64_t seed = test_seed();
  std::mt19937_64 g(seed);
  const int cases = taskring::testing::test_scale(400, 100, 4000);
  for (int c = 0; c < cases; ++c) {
    taskring_error err;
    std::memset(&err, 0x5a, sizeof(err));
    int32_t rc = TASKRING_OK;
    std::string what = bad_call(g, &rc, &err);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", case " + std::to_string(c) + " on " + GetParam() + ": " + what);
    std::fprintf(stderr, "[c-abi-bad-args] seed %llu case %d: %s -> %d %s\n", static_cast<unsigned long long>(seed), c,
                 what.c_str(), rc, rc != TASKRING_OK ? err.message : "");
    ASSERT_NE(rc, TASKRING_OK) << "a bad call was accepted";
    ASSERT_EQ(err.code, rc) << "err.code must equal the return code";
    ASSERT_NE(std::strlen(err.message), 0u) << "an error without a message";
    ASSERT_LT(std::strlen(err.message), sizeof(err.message)) << "message not terminated";
    if (c % 50 == 49) {
      expect_still_good();
      if (HasFatalFailure()) return;
    }
  }
  expect_still_good();
}

TEST_P(CApiBadArgs, NullErrorPointerIsAccepted) {
  // err may be NULL: the code is still returned, nothing is written.
  uint32_t shapes[1] = {4};
  taskring_tensor t;
  EXPECT_NE(taskring_make_tensor(0x1000, shapes, 0, 0, 0, &t, nullptr), TASKRING_OK);
  EXPECT_NE(taskring_launch(nullptr, nullptr), TASKRING_OK);
  EXPECT_NE(taskring_prepare(w_, 9999, nullptr, -1, nullptr, 0, nullptr), TASKRING_OK);
  EXPECT_NE(taskring_device_free(w_, 12345, nullptr), TASKRING_OK);
  taskring_worker* w = nullptr;
  EXPECT_NE(taskring_worker_create("no-such-device", GetParam(), &w, nullptr), TASKRING_OK);
  EXPECT_EQ(w, nullptr);
  EXPECT_NE(taskring_worker_create("sim", "no-such-runtime", nullptr, nullptr), TASKRING_OK);
  expect_still_good();
}

INSTANTIATE_TEST_SUITE_P(BothRuntimes, CApiBadArgs, ::testing::Values("tmr", "hbg"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

}  // namespace
