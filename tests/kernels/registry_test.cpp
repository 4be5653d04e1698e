#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_util.hpp"
#include "taskring/kernels/kernel_args.hpp"
#include "taskring/kernels/registry.hpp"

namespace taskring::kernels {
namespace {

using ::testing::HasSubstr;
using testing::HostTensor;

void noop_kernel(int64_t*) {}
void failing_kernel(int64_t* args) {
  taskring_kernel_fail(taskring_kernel_local(args), TASKRING_KERNEL_ERR_OUT_OF_RANGE, "index 9 past 4");
}
void odd_code_kernel(int64_t* args) { taskring_kernel_fail(taskring_kernel_local(args), 77, "custom"); }
// Echoes what it sees so the args layout can be checked.
void echo_kernel(int64_t* args) {
  KernelLocalContext* ctx = taskring_kernel_local(args);
  auto* t = reinterpret_cast<const ChipTensor*>(args[0]);
  int32_t* out = t->data<int32_t>();
  out[0] = ctx->tensor_count;
  out[1] = ctx->scalar_count;
  out[2] = static_cast<int32_t>(args[ctx->tensor_count + 0]);
  out[3] = static_cast<int32_t>(args[ctx->tensor_count + 1]);
  out[4] = taskring_kernel_global(args) != nullptr;
  out[5] = ctx->block_num;
}

TEST(KernelRegistry, RegisterFindAndName) {
  KernelRegistry r;
  ASSERT_TRUE(r.register_kernel(7, noop_kernel, "noop").ok());
  EXPECT_EQ(r.find(7), &noop_kernel);
  EXPECT_EQ(r.name(7), "noop");
  EXPECT_EQ(r.size(), 1);
  EXPECT_EQ(r.find(8), nullptr);
  auto l = r.lookup(7);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(*l, &noop_kernel);
}

TEST(KernelRegistry, DuplicateIdIsAlreadyExists) {
  KernelRegistry r;
  ASSERT_TRUE(r.register_kernel(3, noop_kernel, "first").ok());
  Status s = r.register_kernel(3, failing_kernel, "second");
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(s.message(), HasSubstr("'first'"));
  EXPECT_EQ(r.find(3), &noop_kernel);
}

TEST(KernelRegistry, OutOfRangeAndUnknownIds) {
  KernelRegistry r;
  EXPECT_EQ(r.register_kernel(-1, noop_kernel, "x").code(), StatusCode::kOutOfRange);
  EXPECT_EQ(r.register_kernel(TASKRING_MAX_FUNC_ID, noop_kernel, "x").code(), StatusCode::kOutOfRange);
  EXPECT_EQ(r.register_kernel(0, nullptr, "x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.find(-1), nullptr);
  EXPECT_EQ(r.find(TASKRING_MAX_FUNC_ID), nullptr);
  EXPECT_EQ(r.lookup(1024).status().code(), StatusCode::kOutOfRange);
  Status s = r.lookup(5).status();
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("5"));
  EXPECT_TRUE(r.register_kernel(TASKRING_MAX_FUNC_ID - 1, noop_kernel, "last").ok());
}

TEST(KernelRegistry, LoadsSharedLibraryAndRunsIt) {
  KernelRegistry r;
  ASSERT_TRUE(r.load_library(11, TASKRING_TEST_KERNEL_SO, "so_kernel").ok());
  ASSERT_NE(r.find(11), nullptr);
  HostTensor out({4}, DataType::INT32);
  uint64_t scalar = 5;
  ASSERT_TRUE(invoke_kernel(r, 11, &out.t(), 1, &scalar, 1).ok());
  EXPECT_EQ(out.get(0), 47);
  // The library reports failures through the same context.
  scalar = static_cast<uint64_t>(-1);
  Status s = invoke_kernel(r, 11, &out.t(), 1, &scalar, 1);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_THAT(s.message(), HasSubstr("kernel 'so_kernel' (func 11)"));
  EXPECT_THAT(s.message(), HasSubstr("scalar -1 refused"));
}

TEST(KernelRegistry, BadPathCarriesDlerror) {
  KernelRegistry r;
  Status s = r.load_library(2, "/nonexistent/libnope.so");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("/nonexistent/libnope.so"));
  EXPECT_THAT(s.message(), HasSubstr("No such file"));  // dlerror text
  EXPECT_EQ(r.find(2), nullptr);
}

TEST(KernelRegistry, MissingSymbolCarriesDlerror) {
  KernelRegistry r;
  Status s = r.load_library(2, TASKRING_TEST_KERNEL_SO, "x", "no_such_entry");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("no_such_entry"));
  EXPECT_THAT(s.message(), HasSubstr("undefined symbol"));
}

TEST(KernelRegistry, LoadIntoTakenIdFailsBeforeLoading) {
  KernelRegistry r;
  ASSERT_TRUE(r.register_kernel(4, noop_kernel, "taken").ok());
  EXPECT_EQ(r.load_library(4, TASKRING_TEST_KERNEL_SO).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(r.load_library(4000, TASKRING_TEST_KERNEL_SO).code(), StatusCode::kOutOfRange);
}

TEST(InvokeKernel, BuildsTheArgsLayout) {
  HostTensor out({8}, DataType::INT32);
  ChipTensor ts[2] = {out.t(), out.t()};
  uint64_t sc[2] = {123, 456};
  ASSERT_TRUE(invoke_kernel(echo_kernel, ts, 2, sc, 2).ok());
  EXPECT_EQ(out.get(0), 2);
  EXPECT_EQ(out.get(1), 2);
  EXPECT_EQ(out.get(2), 123);
  EXPECT_EQ(out.get(3), 456);
  EXPECT_EQ(out.get(4), 1);
  EXPECT_EQ(out.get(5), 1);
}

TEST(InvokeKernel, KernelFailureBecomesStatus) {
  KernelLocalContext ctx{};
  ctx.block_num = 1;
  Status s = invoke_kernel(failing_kernel, nullptr, 0, nullptr, 0, &ctx, "gather", 12);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "kernel 'gather' (func 12) failed (code 2): index 9 past 4");
  EXPECT_EQ(ctx.error_code, 2);
  // A reused context starts clean.
  EXPECT_TRUE(invoke_kernel(noop_kernel, nullptr, 0, nullptr, 0, &ctx).ok());
  EXPECT_EQ(invoke_kernel(odd_code_kernel, nullptr, 0, nullptr, 0).code(), StatusCode::kAborted);
}

TEST(InvokeKernel, RejectsBadCounts) {
  EXPECT_EQ(invoke_kernel(noop_kernel, nullptr, 33, nullptr, 0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(invoke_kernel(noop_kernel, nullptr, 0, nullptr, 17).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(invoke_kernel(nullptr, nullptr, 0, nullptr, 0).code(), StatusCode::kInvalidArgument);
  KernelRegistry r;
  EXPECT_EQ(invoke_kernel(r, 9, nullptr, 0, nullptr, 0).code(), StatusCode::kNotFound);
}

TEST(Builtins, RegisterAllOnceUnderTheirIds) {
  KernelRegistry r;
  ASSERT_TRUE(register_builtin_kernels(r).ok());
  EXPECT_EQ(r.size(), builtin_id::kBuiltinCount);
  EXPECT_EQ(r.name(builtin_id::kAdd), "add");
  EXPECT_EQ(r.name(builtin_id::kPagedAttentionDecode), "paged_attention_decode");
  for (int i = 0; i < builtin_id::kBuiltinCount; ++i) EXPECT_NE(r.find(builtin_id::kBuiltinBase + i), nullptr) << i;
  EXPECT_EQ(register_builtin_kernels(r).code(), StatusCode::kAlreadyExists);
}

TEST(Builtins, NullContextIsANoOp) {
  // Without a local context a kernel cannot report, so it must not run: valid
  // tensors in the argument slots stay untouched.
  HostTensor a({4, 8}, DataType::FP32), b({4, 8}, DataType::FP32), out({4, 8}, DataType::FP32);
  a.fill(1.0);
  b.fill(2.0);
  out.fill(-7.0);
  int64_t args[TASKRING_KERNEL_ARG_SLOTS] = {};
  args[0] = reinterpret_cast<int64_t>(&a.t());
  args[1] = reinterpret_cast<int64_t>(&b.t());
  args[2] = reinterpret_cast<int64_t>(&out.t());
  ASSERT_EQ(args[TASKRING_KERNEL_ARG_LOCAL_CONTEXT], 0);
  taskring_builtin_add(args);
  taskring_builtin_mul(args);
  taskring_builtin_paged_attention_decode(args);
  for (size_t i = 0; i < out.numel(); ++i) ASSERT_EQ(out.get(i), -7.0) << "element " << i;
  EXPECT_FALSE(KernelArgs(args, "add").usable());
  EXPECT_FALSE(KernelArgs(nullptr, "add").usable());
  // The same slots with a context do run: the check above can fail.
  KernelLocalContext ctx{};
  ctx.block_num = 1;
  ctx.tensor_count = 3;
  args[TASKRING_KERNEL_ARG_LOCAL_CONTEXT] = reinterpret_cast<int64_t>(&ctx);
  taskring_builtin_add(args);
  EXPECT_EQ(ctx.error_code, 0) << ctx.error_message;
  EXPECT_EQ(out.get(0), 3.0);
}

}  // namespace
}  // namespace taskring::kernels
