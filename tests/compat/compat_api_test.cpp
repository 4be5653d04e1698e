// The upstream API surface as an orchestration source sees it, checked
// without a runtime: names at global scope, upstream numbers, and the
// semantics that live in the headers (scalar packing, views, proxies).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "pto_arg_with_deps.h"

namespace {

ChipTensor tensor_over(float* data, std::initializer_list<uint32_t> shape) {
  return make_tensor_external(data, shape, DataType::FLOAT32);
}

TEST(CompatScalars, SignedIntegersAreZeroExtendedAsUpstream) {
  CoreTaskArgs args;
  args.add_scalar(int32_t{-1}, int8_t{-2}, 1.0f, 2.5, int64_t{-3}, true);
  ASSERT_FALSE(args.has_error()) << args.error_msg();
  EXPECT_EQ(args.scalar(0), 0x00000000ffffffffull);
  EXPECT_EQ(args.scalar(1), 0xfeull);
  EXPECT_EQ(args.scalar(2), 0x3f800000ull);
  uint64_t d = 0;
  double v = 2.5;
  std::memcpy(&d, &v, 8);
  EXPECT_EQ(args.scalar(3), d);
  EXPECT_EQ(args.scalar(4), static_cast<uint64_t>(int64_t{-3}));
  EXPECT_EQ(args.scalar(5), 1u);
  EXPECT_EQ(to_u64(int16_t{-1}), 0xffffull);
  EXPECT_EQ(from_u64<int16_t>(0xffffull), -1);
  EXPECT_EQ(from_u64<float>(0x3f800000ull), 1.0f);
}

TEST(CompatArgs, TensorSlotIsAReferenceProxy) {
  float buf[4] = {};
  ChipTensor t = tensor_over(buf, {4});
  uint32_t shape[1] = {4};
  TensorCreateInfo ci(shape, 1);
  ChipTaskArgs args;
  args.add_input(t);
  args.add_output(ci);
  EXPECT_EQ(&args.tensor(0).ref(), &t);
  EXPECT_EQ(&*args.tensor(0), &t);
  EXPECT_EQ(args.tensor(0)->ndims, 1u);
  const ChipTensor* p = args.tensor(0);
  EXPECT_EQ(p, &t);
  // An OUTPUT slot holds no ChipTensor: nullptr, and ref() is poisoned.
  EXPECT_EQ(static_cast<const ChipTensor*>(args.tensor(1)), nullptr);
  EXPECT_TRUE(args.tensor(1).ref().is_poisoned());
  EXPECT_EQ(args.tensor(1).create_info(), &ci);
}

TEST(CompatArgs, VariadicAddsTagEachTensor) {
  float a[4] = {}, b[4] = {};
  ChipTensor ta = tensor_over(a, {4});
  ChipTensor tb = tensor_over(b, {4});
  uint32_t shape[1] = {4};
  TensorCreateInfo c1(shape, 1), c2(shape, 1);
  CoreTaskArgs args;
  args.add_input(ta, tb);
  args.add_inout(ta, tb);
  args.add_output(ta, tb);
  args.add_output(c1, c2);
  args.add_no_dep(ta);
  ASSERT_FALSE(args.has_error()) << args.error_msg();
  ASSERT_EQ(args.tensor_count(), 9);
  const TensorArgType want[9] = {TensorArgType::INPUT,           TensorArgType::INPUT,
                                 TensorArgType::INOUT,           TensorArgType::INOUT,
                                 TensorArgType::OUTPUT_EXISTING, TensorArgType::OUTPUT_EXISTING,
                                 TensorArgType::OUTPUT,          TensorArgType::OUTPUT,
                                 TensorArgType::NO_DEP};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(args.tag(i), want[i]) << i;
}

TEST(CompatArgs, ResetDumpTimingAndEarlyResolve) {
  CoreTaskArgs args;
  args.set_task_timing_slot(16);
  ASSERT_TRUE(args.has_error());
  EXPECT_NE(std::string(args.error_msg()).find("0..15"), std::string::npos) << args.error_msg();
  args.reset();
  EXPECT_FALSE(args.has_error());
  args.set_task_timing_slot(15);
  args.set_allow_early_resolve();
  uint64_t s = 7;
  args.add_scalar(s);
  args.dump(s);
  args.dump();
  EXPECT_FALSE(args.has_error());
  EXPECT_EQ(args.task_timing_slot(), 15);
  EXPECT_TRUE(args.allow_early_resolve());
  args.reset();
  EXPECT_EQ(args.task_timing_slot(), TASK_TIMING_SLOT_NONE);
  EXPECT_FALSE(args.allow_early_resolve());
  EXPECT_EQ(args.scalar_count(), 0);
}

TEST(CompatArgs, LaunchSpecOffersBothArchitectureSpellings) {
  CoreTaskArgs args;
  EXPECT_EQ(args.launch_spec.block_num(), 1);
  args.launch_spec.set_block_num(4);
  EXPECT_EQ(args.launch_spec.core_num(), 4);
  args.launch_spec.set_core_num(6);
  EXPECT_EQ(args.launch_spec.block_num(), 6);
  EXPECT_FALSE(args.launch_spec.require_sync_start());
  args.launch_spec.set_require_sync_start(true);
  EXPECT_TRUE(args.launch_spec.require_sync_start());
  PTO2LaunchSpec spec;
  EXPECT_EQ(spec.blocks(), 1);
}

TEST(CompatArgs, WithDepsCollectsExplicitDependencies) {
  CoreTaskArgsWithDeps<2> args;
  args.add_dep(PTO2TaskId::make(0, 1), PTO2TaskId::make(0, 2));
  ASSERT_EQ(args.dependency_count(), 2);
  EXPECT_EQ(args.dependency_ids()[1], PTO2TaskId::make(0, 2));
}

TEST(CompatOutputs, TaskIdIsAMethodAndOutOfRangeIsPoisoned) {
  TaskOutputTensors outs;
  EXPECT_FALSE(outs.task_id().is_valid());
  EXPECT_TRUE(outs.empty());
  EXPECT_EQ(outs.size(), 0u);
  EXPECT_TRUE(outs.get_ref(0).is_poisoned());
  outs.set_task_id(PTO2TaskId::make(1, 2));
  EXPECT_EQ(outs.task_id(), PTO2TaskId::make(1, 2));
}

TEST(CompatErrors, CodesAreGlobalWithUpstreamNumbers) {
  EXPECT_EQ(PTO2_ERROR_NONE, 0);
  EXPECT_EQ(PTO2_ERROR_SCOPE_DEADLOCK, 1);
  EXPECT_EQ(PTO2_ERROR_HEAP_RING_DEADLOCK, 2);
  EXPECT_EQ(PTO2_ERROR_FLOW_CONTROL_DEADLOCK, 3);
  EXPECT_EQ(PTO2_ERROR_DEP_POOL_OVERFLOW, 4);
  EXPECT_EQ(PTO2_ERROR_INVALID_ARGS, 5);
  EXPECT_EQ(PTO2_ERROR_DEPENDENCY_OVERFLOW, 6);
  EXPECT_EQ(PTO2_ERROR_REQUIRE_SYNC_START_INVALID, 7);
  EXPECT_EQ(PTO2_ERROR_TENSOR_WAIT_TIMEOUT, 8);
  EXPECT_EQ(PTO2_ERROR_EXPLICIT_ORCH_FATAL, 9);
  EXPECT_EQ(PTO2_ERROR_SCOPE_TASKS_OVERFLOW, 10);
  EXPECT_EQ(PTO2_ERROR_TENSORMAP_OVERFLOW, 11);
  EXPECT_EQ(PTO2_ERROR_SCHEDULER_TIMEOUT, 100);
  EXPECT_EQ(PTO2_ERROR_ASYNC_COMPLETION_INVALID, 101);
  EXPECT_EQ(PTO2_ERROR_ASYNC_WAIT_OVERFLOW, 102);
  EXPECT_EQ(PTO2_ERROR_ASYNC_REGISTRATION_FAILED, 103);
}

TEST(CompatDataType, UpstreamHelpers) {
  EXPECT_EQ(get_element_size(DataType::FLOAT32), 4u);
  EXPECT_EQ(get_element_size(DataType::BFLOAT16), 2u);
  EXPECT_EQ(get_element_size(DataType::INT64), 8u);
  EXPECT_STREQ(get_dtype_name(DataType::FLOAT32), "FLOAT32");
  EXPECT_STREQ(get_dtype_name(DataType::BFLOAT16), "BFLOAT16");
  EXPECT_STREQ(get_dtype_name(DataType::INT32), "INT32");
  EXPECT_STREQ(get_dtype_name(static_cast<DataType>(99)), "UNKNOWN");
}

TEST(CompatViews, ManualDepComesFromTheArgument) {
  float buf[16] = {};
  ChipTensor t = make_tensor_external(buf, {4, 4}, DataType::FLOAT32, /*manual_dep=*/true);
  uint32_t s[2] = {2, 2}, o[2] = {1, 1};
  EXPECT_FALSE(t.view(s, o).manual_dep);  // upstream: not inherited
  EXPECT_TRUE(t.view(s, o, true).manual_dep);
  EXPECT_FALSE(t.transpose(0, 1).manual_dep);
  uint32_t flat[1] = {16};
  ChipTensor r = t.reshape(flat, 1, true);
  EXPECT_TRUE(r.manual_dep);
  EXPECT_EQ(r.ndims, 1u);
  EXPECT_EQ(r.shapes[0], 16u);
  // The checked spellings keep taskring's inheritance.
  EXPECT_TRUE(t.try_view(s, o)->manual_dep);
  // reshape of a non-contiguous view is poisoned (upstream asserts).
  uint32_t four[1] = {4};
  EXPECT_TRUE(t.view(s, o).reshape(four, 1).is_poisoned());
  EXPECT_EQ(t.data_as<float>(), buf);
  EXPECT_EQ(t.view(s, o).data_as<float>(), buf);  // the buffer base, as upstream
}

TEST(CompatPredicate, ElementIsSignExtendedThenCompared) {
  int8_t minus_one = -1;
  EXPECT_TRUE(predicate_passes(PredicateOp::EQ, &minus_one, 1, -1));
  EXPECT_TRUE(predicate_passes(PredicateOp::LT, &minus_one, 1, 0));
  int32_t three = 3;
  EXPECT_TRUE(predicate_passes(PredicateOp::GT, &three, 4, 2));
  EXPECT_FALSE(predicate_passes(PredicateOp::GT, &three, 4, 3));
  EXPECT_TRUE(predicate_passes(PredicateOp::GE, &three, 4, 3));
  EXPECT_TRUE(predicate_passes(PredicateOp::LE, &three, 4, 3));
  EXPECT_TRUE(predicate_passes(PredicateOp::NE, &three, 4, 4));
  EXPECT_TRUE(predicate_passes(PredicateOp::NONE, &three, 4, 99));
}

TEST(CompatConfig, NewerSpellingsAreAliases) {
  OrchestrationConfig c{.expected_arg_count = 3};
  PTO2OrchestrationConfig& same = c;
  EXPECT_EQ(same.expected_arg_count, 3);
}

}  // namespace
