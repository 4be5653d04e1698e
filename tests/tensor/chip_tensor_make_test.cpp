// Building ChipTensors: try_make_tensor(_strided) and make_tensor_external.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>

#include "taskring/tensor/chip_tensor.hpp"

namespace taskring {
namespace {

using ::testing::HasSubstr;

TEST(MakeTensor, ContiguousFieldsAreSet) {
  auto t = try_make_tensor(0xABC000, 2 * 3 * 8, std::array<uint32_t, 2>{2, 3}, DataType::INT64, true, 7,
                           AddressSpace::DEVICE);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->buffer.addr, 0xABC000u);
  EXPECT_EQ(t->buffer.size, 48u);
  EXPECT_EQ(t->dtype, DataType::INT64);
  EXPECT_TRUE(t->manual_dep);
  EXPECT_EQ(t->version, 7);
  EXPECT_EQ(t->address_space, AddressSpace::DEVICE);
  EXPECT_FALSE(t->owner_task_id.is_valid());
  EXPECT_TRUE(t->is_contiguous);
}

TEST(MakeTensor, Errors) {
  auto small = try_make_tensor(0x1000, 10, std::array<uint32_t, 1>{4});
  ASSERT_FALSE(small.ok());
  EXPECT_THAT(small.status().message(), HasSubstr("make_tensor"));
  EXPECT_THAT(small.status().message(), HasSubstr("exceeds the buffer"));
  auto rank0 = try_make_tensor(0x1000, 10, std::span<const uint32_t>());
  EXPECT_THAT(rank0.status().message(), HasSubstr("rank 0 outside 1..5"));
  auto rank6 = try_make_tensor(0x1000, 10, std::array<uint32_t, 6>{1, 1, 1, 1, 1, 1});
  EXPECT_THAT(rank6.status().message(), HasSubstr("rank 6 outside 1..5"));
  auto dtype = try_make_tensor(0x1000, 16, std::array<uint32_t, 1>{4}, static_cast<DataType>(42));
  EXPECT_THAT(dtype.status().message(), HasSubstr("dtype value 42"));
  auto overflow = try_make_tensor(0, UINT64_MAX, std::array<uint32_t, 3>{2, 0xffffffffu, 0xffffffffu});
  EXPECT_FALSE(overflow.ok());
}

TEST(MakeTensorStrided, StridesAndStartOffset) {
  auto t = try_make_tensor_strided(0x1000, 1024, std::array<uint32_t, 2>{3, 4}, std::array<uint32_t, 2>{10, 2}, 5,
                                   DataType::FP16);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_FALSE(t->is_contiguous);
  EXPECT_EQ(t->extent_elem_cache, 1u + 2 * 10 + 3 * 2);
  EXPECT_EQ(t->data_addr(), 0x1000u + 10);
  auto mismatch = try_make_tensor_strided(0x1000, 1024, std::array<uint32_t, 2>{3, 4}, std::array<uint32_t, 1>{1}, 0);
  EXPECT_THAT(mismatch.status().message(), HasSubstr("strides rank 1 differs"));
  auto zero = try_make_tensor_strided(0x1000, 1024, std::array<uint32_t, 2>{3, 4}, std::array<uint32_t, 2>{4, 0}, 0);
  EXPECT_THAT(zero.status().message(), HasSubstr("stride is 0"));
  auto past = try_make_tensor_strided(0x1000, 64, std::array<uint32_t, 1>{4}, std::array<uint32_t, 1>{1}, 13);
  EXPECT_THAT(past.status().message(), HasSubstr("exceeds the buffer"));
}

TEST(MakeTensorExternal, UpstreamSpelling) {
  float data[12] = {};
  ChipTensor t = make_tensor_external(data, {3, 4});
  ASSERT_FALSE(t.is_poisoned());
  EXPECT_EQ(t.data<float>(), data);
  EXPECT_EQ(t.buffer.size, sizeof(data));
  EXPECT_EQ(t.address_space, AddressSpace::HOST);
  EXPECT_TRUE(t.validate().ok());
  ChipTensor empty = make_tensor_external(data, {3, 0});
  ASSERT_FALSE(empty.is_poisoned());
  EXPECT_TRUE(empty.is_contiguous);
  EXPECT_EQ(empty.buffer.size, 0u);
}

TEST(MakeTensorExternal, MalformedInputIsPoisonedWithItsReason) {
  float data[4] = {};
  EXPECT_EQ(make_tensor_external(data, nullptr, 2).poison, ViewError::kBadRank);
  EXPECT_EQ(make_tensor_external(data, {}).poison, ViewError::kBadRank);
  EXPECT_EQ(make_tensor_external(data, {1, 1, 1, 1, 1, 1}).poison, ViewError::kBadRank);
  EXPECT_EQ(make_tensor_external(data, {4}, static_cast<DataType>(12)).poison, ViewError::kBadDataType);
  EXPECT_EQ(make_tensor_external(data, {0xffffffffu, 0xffffffffu, 0xffffffffu}).poison, ViewError::kStrideOverflow);
  ChipTensor bad = make_tensor_external(data, {4}, static_cast<DataType>(12));
  EXPECT_THAT(bad.validate().message(), HasSubstr("dtype is not a DataType"));
}

}  // namespace
}  // namespace taskring
