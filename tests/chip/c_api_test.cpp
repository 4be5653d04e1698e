// The C ABI end to end: the vector example driven only through c_api.h, and
// its error paths (bad handles, bad tags, bad tensors, unknown callable).
#include "taskring/c_api.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pto_orchestration_api.h"
#include "taskring/kernels/builtin_ids.hpp"

// Defined in c_api_compile_test.c, compiled as C11.
extern "C" int taskring_c_api_header_is_c(void);

namespace {

namespace bid = taskring::kernels::builtin_id;

extern "C" void capi_vector_entry(const ChipTaskArgs& args) {
  const ChipTensor& a = *args.tensor(0);
  const ChipTensor& b = *args.tensor(1);
  const ChipTensor& f = *args.tensor(2);
  TensorCreateInfo ci(a.shapes, a.ndims, DataType::FLOAT32);
  CoreTaskArgs t0;
  t0.add_input(a).add_input(b).add_output(ci);
  TaskOutputTensors r0 = rt_submit_aiv_task(bid::kAdd, t0);
  CoreTaskArgs t1;
  t1.add_input(r0.get_ref(0)).add_output(ci).add_scalar(1.0f);
  TaskOutputTensors r1 = rt_submit_aiv_task(bid::kAddScalar, t1);
  CoreTaskArgs t2;
  t2.add_input(r0.get_ref(0)).add_output(ci).add_scalar(2.0f);
  TaskOutputTensors r2 = rt_submit_aiv_task(bid::kAddScalar, t2);
  CoreTaskArgs t3;
  t3.add_input(r1.get_ref(0)).add_input(r2.get_ref(0)).add_output(ci);
  TaskOutputTensors r3 = rt_submit_aiv_task(bid::kMul, t3);
  CoreTaskArgs t4;
  t4.add_input(r3.get_ref(0)).add_input(r0.get_ref(0)).add_output(f);
  rt_submit_aiv_task(bid::kAdd, t4);
}

TEST(CApi, VectorExampleThroughTheCAbi) {
  taskring_error err;
  taskring_worker* w = nullptr;
  ASSERT_EQ(taskring_worker_create("sim", "tmr", &w, &err), TASKRING_OK) << err.message;
  taskring_callable_desc desc{};
  desc.name = "capi_vector";
  desc.entry = reinterpret_cast<void*>(&capi_vector_entry);
  int32_t id = -1;
  ASSERT_EQ(taskring_register_callable(w, &desc, &id, &err), TASKRING_OK) << err.message;
  const uint32_t shape[2] = {64, 64};
  std::vector<float> a(64 * 64, 2.0f), b(64 * 64, 3.0f), f(64 * 64, 0.0f);
  taskring_tensor ta, tb, tf;
  ASSERT_EQ(taskring_make_tensor(reinterpret_cast<uint64_t>(a.data()), shape, 2, 0, 0, &ta, &err), TASKRING_OK);
  ASSERT_EQ(taskring_make_tensor(reinterpret_cast<uint64_t>(b.data()), shape, 2, 0, 0, &tb, &err), TASKRING_OK);
  ASSERT_EQ(taskring_make_tensor(reinterpret_cast<uint64_t>(f.data()), shape, 2, 0, 0, &tf, &err), TASKRING_OK);
  taskring_arg args[3] = {{&ta, TASKRING_ARG_INPUT}, {&tb, TASKRING_ARG_INPUT}, {&tf, TASKRING_ARG_OUTPUT_EXISTING}};
  taskring_run_report report;
  // prepare / launch / poll / wait / finalize, then run() composing them.
  ASSERT_EQ(taskring_prepare(w, id, args, 3, nullptr, 0, &err), TASKRING_OK) << err.message;
  ASSERT_EQ(taskring_launch(w, &err), TASKRING_OK) << err.message;
  int32_t done = -1;
  ASSERT_EQ(taskring_poll(w, &done, &err), TASKRING_OK) << err.message;
  EXPECT_TRUE(done == 0 || done == 1);
  ASSERT_EQ(taskring_wait(w, &err), TASKRING_OK) << err.message;
  ASSERT_EQ(taskring_finalize(w, &report, &err), TASKRING_OK) << err.message;
  for (float v : f) ASSERT_EQ(v, 47.0f);
  EXPECT_EQ(report.tasks_submitted, 5u);
  EXPECT_EQ(report.h2d_calls, 2u);
  EXPECT_EQ(report.d2h_calls, 1u);
  std::fill(f.begin(), f.end(), 0.0f);
  ASSERT_EQ(taskring_run(w, id, args, 3, nullptr, 0, &report, &err), TASKRING_OK) << err.message;
  for (float v : f) ASSERT_EQ(v, 47.0f);
  taskring_worker_destroy(w);
}

TEST(CApi, HeaderCompilesAsCWithTheSameLayout) {
  // A C caller and a C++ caller must agree on the size of the tensor record.
  EXPECT_EQ(taskring_c_api_header_is_c(), static_cast<int>(sizeof(taskring_tensor)));
}

TEST(CApi, ErrorsAreValuesWithMessages) {
  taskring_error err;
  taskring_worker* w = nullptr;
  EXPECT_NE(taskring_worker_create("gpu9000", nullptr, &w, &err), TASKRING_OK);
  EXPECT_NE(std::string(err.message).find("unknown device"), std::string::npos) << err.message;
  EXPECT_EQ(w, nullptr);
  EXPECT_NE(taskring_launch(nullptr, &err), TASKRING_OK);
  EXPECT_NE(std::string(err.message).find("null worker"), std::string::npos);

  ASSERT_EQ(taskring_worker_create(nullptr, nullptr, &w, &err), TASKRING_OK) << err.message;
  taskring_tensor t;
  const uint32_t shape[1] = {4};
  EXPECT_NE(taskring_make_tensor(0x1000, shape, 0, 0, 0, &t, &err), TASKRING_OK);
  EXPECT_NE(std::string(err.message).find("ndims"), std::string::npos);
  EXPECT_NE(taskring_make_tensor(0x1000, shape, 1, 99, 0, &t, &err), TASKRING_OK);
  EXPECT_NE(std::string(err.message).find("dtype"), std::string::npos);
  float x[4] = {};
  ASSERT_EQ(taskring_make_tensor(reinterpret_cast<uint64_t>(x), shape, 1, 0, 0, &t, &err), TASKRING_OK);
  taskring_arg bad_tag{&t, 1};  // OUTPUT is not an entry tag
  EXPECT_NE(taskring_prepare(w, 0, &bad_tag, 1, nullptr, 0, &err), TASKRING_OK);
  EXPECT_NE(std::string(err.message).find("tag 1"), std::string::npos) << err.message;
  taskring_arg good{&t, TASKRING_ARG_INPUT};
  EXPECT_NE(taskring_prepare(w, 7, &good, 1, nullptr, 0, &err), TASKRING_OK);
  EXPECT_NE(std::string(err.message).find("unknown callable id 7"), std::string::npos) << err.message;
  uint64_t dev = 0;
  ASSERT_EQ(taskring_device_malloc(w, 256, &dev, &err), TASKRING_OK) << err.message;
  EXPECT_NE(taskring_copy_to_device(w, dev, x, 4096, &err), TASKRING_OK);  // out of bounds
  EXPECT_EQ(taskring_device_free(w, dev, &err), TASKRING_OK) << err.message;
  EXPECT_NE(taskring_device_free(w, dev, &err), TASKRING_OK);  // double free
  taskring_kernel_desc k{5000, nullptr, nullptr};
  taskring_callable_desc desc{};
  desc.entry = reinterpret_cast<void*>(&capi_vector_entry);
  desc.kernels = &k;
  desc.kernel_count = 1;
  int32_t id = -1;
  EXPECT_NE(taskring_register_callable(w, &desc, &id, &err), TASKRING_OK);
  EXPECT_NE(std::string(err.message).find("5000"), std::string::npos) << err.message;
  taskring_worker_destroy(w);
}

}  // namespace
