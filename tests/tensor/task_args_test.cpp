#include "taskring/tensor/task_args.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace taskring {
namespace {

using ::testing::HasSubstr;

ChipTensor some_tensor() {
  static float data[16];
  return make_tensor_external(data, {16});
}

template <typename Args>
class TaskArgsCapacity : public ::testing::Test {};
using AllContainers = ::testing::Types<CoreTaskArgs, GraphTaskArgs, ChipTaskArgs>;
TYPED_TEST_SUITE(TaskArgsCapacity, AllContainers);

TYPED_TEST(TaskArgsCapacity, TensorCapacityOverflowIsLatched) {
  ChipTensor t = some_tensor();
  TypeParam args;
  for (int i = 0; i < TypeParam::kTensorCapacity; ++i) args.add_input(t);
  EXPECT_FALSE(args.has_error());
  EXPECT_EQ(args.tensor_count(), TypeParam::kTensorCapacity);
  args.add_inout(t);
  ASSERT_TRUE(args.has_error());
  EXPECT_EQ(args.tensor_count(), TypeParam::kTensorCapacity);
  std::string cap = std::to_string(TypeParam::kTensorCapacity);
  EXPECT_THAT(args.error_msg(), HasSubstr("add_inout: tensor capacity " + cap + " exceeded"));
}

TYPED_TEST(TaskArgsCapacity, ScalarCapacityOverflowIsLatched) {
  TypeParam args;
  for (int i = 0; i < TypeParam::kScalarCapacity; ++i) args.add_scalar(i);
  EXPECT_FALSE(args.has_error());
  args.add_scalar(1.0f);
  ASSERT_TRUE(args.has_error());
  EXPECT_EQ(args.scalar_count(), TypeParam::kScalarCapacity);
  EXPECT_THAT(args.error_msg(),
              HasSubstr("add_scalar: scalar capacity " + std::to_string(TypeParam::kScalarCapacity) + " exceeded"));
}

TYPED_TEST(TaskArgsCapacity, BulkScalarsOverflowToo) {
  TypeParam args;
  std::vector<uint64_t> many(TypeParam::kScalarCapacity + 3, 7);
  args.add_scalars(many.data(), static_cast<int>(many.size()));
  ASSERT_TRUE(args.has_error());
  EXPECT_THAT(args.error_msg(), HasSubstr("add_scalars: scalar capacity"));
  TypeParam i32;
  std::vector<int32_t> ints(TypeParam::kScalarCapacity + 1, -1);
  i32.add_scalars_i32(ints.data(), static_cast<int>(ints.size()));
  EXPECT_THAT(i32.error_msg(), HasSubstr("add_scalars_i32: scalar capacity"));
}

TEST(TaskArgs, UpstreamCapacities) {
  EXPECT_EQ(CoreTaskArgs::kTensorCapacity, 32);
  EXPECT_EQ(CoreTaskArgs::kScalarCapacity, 16);
  EXPECT_EQ(GraphTaskArgs::kTensorCapacity, 128);
  EXPECT_EQ(GraphTaskArgs::kScalarCapacity, 64);
  EXPECT_EQ(ChipTaskArgs::kTensorCapacity, 256);
  EXPECT_EQ(ChipTaskArgs::kScalarCapacity, 128);
}

TEST(TaskArgs, TagsAndReading) {
  ChipTensor a = some_tensor(), b = some_tensor(), c = some_tensor(), d = some_tensor();
  TensorCreateInfo out({4, 4});
  CoreTaskArgs args;
  args.add_input(a).add_output(out).add_inout(b).add_output(c).add_no_dep(d).add_tensor(a, TensorArgType::INPUT);
  ASSERT_FALSE(args.has_error()) << args.error_msg();
  ASSERT_EQ(args.tensor_count(), 6);
  EXPECT_EQ(args.tag(0), TensorArgType::INPUT);
  EXPECT_EQ(args.tag(1), TensorArgType::OUTPUT);
  EXPECT_EQ(args.tag(2), TensorArgType::INOUT);
  EXPECT_EQ(args.tag(3), TensorArgType::OUTPUT_EXISTING);
  EXPECT_EQ(args.tag(4), TensorArgType::NO_DEP);
  EXPECT_EQ(args.tensor(0), &a);
  EXPECT_EQ(args.tensor(1), nullptr);
  EXPECT_EQ(args.create_info(1), &out);
  EXPECT_EQ(args.create_info(0), nullptr);
  EXPECT_EQ(args.tensor(3), &c);
  EXPECT_EQ(tensor_arg_type_name(TensorArgType::OUTPUT_EXISTING), "OUTPUT_EXISTING");
  EXPECT_EQ(tensor_arg_type_name(static_cast<TensorArgType>(9)), "INVALID");
}

TEST(TaskArgs, AddTensorRefusesOutputTag) {
  ChipTensor a = some_tensor();
  CoreTaskArgs args;
  args.add_tensor(a, TensorArgType::OUTPUT);
  ASSERT_TRUE(args.has_error());
  EXPECT_THAT(args.error_msg(), HasSubstr("OUTPUT takes a TensorCreateInfo"));
  EXPECT_EQ(args.tensor_count(), 0);
}

TEST(TaskArgs, AddTensorRefusesValuesThatAreNoTag) {
  ChipTensor a = some_tensor();
  for (int tag : {-1, 5, 77, 255, 1 << 30}) {
    CoreTaskArgs args;
    args.add_tensor(a, static_cast<TensorArgType>(tag));
    ASSERT_TRUE(args.has_error()) << tag;
    EXPECT_THAT(args.error_msg(), HasSubstr("tag " + std::to_string(tag) + " is not a TensorArgType"));
    EXPECT_EQ(args.tensor_count(), 0);
  }
}

TEST(TaskArgs, TensorsMustComeBeforeScalars) {
  ChipTensor a = some_tensor();
  CoreTaskArgs args;
  args.add_input(a).add_scalar(1).add_input(a);
  ASSERT_TRUE(args.has_error());
  EXPECT_THAT(args.error_msg(), HasSubstr("add_input: tensor argument 1 added after 1 scalar(s)"));
  EXPECT_EQ(args.tensor_count(), 1);
}

TEST(TaskArgs, FirstErrorIsLatchedAndLaterAddsAreIgnored) {
  ChipTensor a = some_tensor();
  CoreTaskArgs args;
  args.add_scalar(1).add_input(a);
  std::string first = args.error_msg();
  for (int i = 0; i < 40; ++i) args.add_scalar(i);
  args.add_output(a);
  EXPECT_EQ(std::string(args.error_msg()), first);
  EXPECT_EQ(args.scalar_count(), 1);
  EXPECT_EQ(args.tensor_count(), 0);
}

TEST(TaskArgs, ScalarBitCasts) {
  CoreTaskArgs args;
  args.add_scalar(1.5f)
      .add_scalar(-2.25)
      .add_scalar(int32_t{-1})
      .add_scalar(int64_t{-5})
      .add_scalar(uint32_t{0xffffffffu});
  args.add_scalar(int8_t{-128}).add_scalar(uint16_t{65535}).add_scalar(true).add_scalar(TensorArgType::INOUT);
  ASSERT_FALSE(args.has_error()) << args.error_msg();
  uint32_t f32;
  float f = 1.5f;
  std::memcpy(&f32, &f, 4);
  EXPECT_EQ(args.scalar(0), uint64_t{f32});  // low half, high half zero
  double d = -2.25;
  uint64_t d64;
  std::memcpy(&d64, &d, 8);
  EXPECT_EQ(args.scalar(1), d64);
  EXPECT_EQ(args.scalar(2), 0xffffffffull);  // zero-extended, as upstream's to_u64
  EXPECT_EQ(static_cast<int64_t>(args.scalar(3)), -5);
  EXPECT_EQ(args.scalar(4), 0xffffffffull);  // zero-extended
  EXPECT_EQ(args.scalar(5), 0x80u);          // zero-extended
  EXPECT_EQ(args.scalar<int8_t>(5), -128);   // read back through from_u64
  EXPECT_EQ(args.scalar(6), 65535u);
  EXPECT_EQ(args.scalar(7), 1u);
  EXPECT_EQ(args.scalar(8), 2u);
  EXPECT_EQ(args.scalars()[0], args.scalar(0));
  EXPECT_EQ(args.scalar<float>(0), 1.5f);
}

TEST(TaskArgs, VariadicScalarsAreAllOrNothing) {
  CoreTaskArgs args;
  args.add_scalar(1.0f, int32_t{-2}, uint8_t{3});
  ASSERT_FALSE(args.has_error()) << args.error_msg();
  ASSERT_EQ(args.scalar_count(), 3);
  EXPECT_EQ(args.scalar(1), 0xfffffffeull);
  for (int i = 0; i < 12; ++i) args.add_scalar(i);
  ASSERT_EQ(args.scalar_count(), 15);
  args.add_scalar(1, 2);  // would make 17 > 16
  EXPECT_TRUE(args.has_error());
  EXPECT_EQ(args.scalar_count(), 15);
  EXPECT_NE(std::string(args.error_msg()).find("scalar capacity 16"), std::string::npos) << args.error_msg();
}

TEST(TaskArgs, Int32BulkScalarsAreZeroExtended) {
  const int32_t v[] = {-1, 3};
  CoreTaskArgs args;
  args.add_scalars_i32(v, 2);
  EXPECT_EQ(args.scalar(0), 0xffffffffull);
  EXPECT_EQ(args.scalar(1), 3u);
  GraphTaskArgs g;
  g.copy_scalars_from(args);
  EXPECT_EQ(g.scalar_count(), 2);
  EXPECT_EQ(g.scalar(0), 0xffffffffull);
}

TEST(TaskArgs, SetDependenciesOnceThenClearWithZero) {
  PTO2TaskId ids[2] = {PTO2TaskId::make(0, 1), PTO2TaskId::make(1, 2)};
  CoreTaskArgs args;
  args.set_dependencies(ids, 2);
  EXPECT_EQ(args.dependency_count(), 2);
  EXPECT_EQ(args.dependency_ids(), ids);
  EXPECT_EQ(args.dependency_flags(), nullptr);
  args.set_dependencies(ids, 1);
  ASSERT_TRUE(args.has_error());
  EXPECT_THAT(args.error_msg(), HasSubstr("set_dependencies: called twice"));

  CoreTaskArgs again;
  again.set_dependencies(ids, 2).set_dependencies(nullptr, 0);
  EXPECT_EQ(again.dependency_count(), 0);
  DepFlags kinds[1] = {DEP_WAIT};
  again.set_dependencies_with_kinds(ids, kinds, 1);
  EXPECT_FALSE(again.has_error());
  EXPECT_EQ(again.dependency_flags(), kinds);

  CoreTaskArgs bad;
  bad.set_dependencies(nullptr, 3);
  EXPECT_THAT(bad.error_msg(), HasSubstr("set_dependencies: bad count 3"));
  CoreTaskArgs neg;
  neg.set_dependencies(ids, -1);
  EXPECT_TRUE(neg.has_error());
}

TEST(TaskArgs, ClearForgetsEverythingIncludingTheError) {
  ChipTensor a = some_tensor();
  PTO2TaskId id = PTO2TaskId::make(0, 0);
  CoreTaskArgs args;
  args.add_input(a).add_scalar(1).set_dependencies(&id, 1);
  args.launch_spec.set_block_num(4);
  args.add_input(a);
  ASSERT_TRUE(args.has_error());
  args.clear();
  EXPECT_FALSE(args.has_error());
  EXPECT_STREQ(args.error_msg(), "");
  EXPECT_EQ(args.tensor_count(), 0);
  EXPECT_EQ(args.scalar_count(), 0);
  EXPECT_EQ(args.dependency_count(), 0);
  EXPECT_EQ(args.launch_spec.block_num(), 1);
  args.add_input(a).set_dependencies(&id, 1);
  EXPECT_FALSE(args.has_error());
}

TEST(CoreTaskArgsWithDeps, AddsDepsUpToItsCapacity) {
  CoreTaskArgsWithDeps<2> args;
  args.add_dep(PTO2TaskId::make(0, 1)).add_dep_wait(PTO2TaskId::make(0, 2));
  ASSERT_FALSE(args.has_error()) << args.error_msg();
  EXPECT_EQ(args.dependency_count(), 2);
  EXPECT_EQ(args.dependency_flags()[0], DEP_WAIT | DEP_RETAIN);
  EXPECT_EQ(args.dependency_flags()[1], DEP_WAIT);
  args.add_dep(PTO2TaskId::make(0, 3));
  EXPECT_TRUE(args.has_error());
}

}  // namespace
}  // namespace taskring
