#include "taskring/tensor/tensor_create_info.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

namespace taskring {
namespace {

using ::testing::HasSubstr;

TEST(TensorCreateInfo, ShapeDtypeAndSize) {
  TensorCreateInfo ci({4, 8, 2}, DataType::BF16, /*manual=*/true);
  EXPECT_EQ(ci.ndims, 3u);
  EXPECT_EQ(ci.numel(), 64u);
  EXPECT_EQ(ci.nbytes(), 128u);
  EXPECT_TRUE(ci.manual_dep);
  EXPECT_FALSE(ci.has_initial_value);
  EXPECT_TRUE(ci.validate().ok());
  EXPECT_EQ(sizeof(TensorCreateInfo), 64u);
}

TEST(TensorCreateInfo, FromPointerAndRank) {
  const uint32_t shape[] = {3, 5};
  TensorCreateInfo ci(shape, 2, DataType::INT64);
  EXPECT_EQ(ci.nbytes(), 3u * 5u * 8u);
  EXPECT_TRUE(ci.validate().ok());
}

TEST(TensorCreateInfo, InitialValueKeepsTheBitPattern) {
  TensorCreateInfo f({2});
  f.set_initial_value(1.5f);
  EXPECT_TRUE(f.has_initial_value);
  float back;
  std::memcpy(&back, &f.initial_value_bits, 4);
  EXPECT_EQ(back, 1.5f);
  EXPECT_EQ(f.initial_value_bits >> 32, 0u);

  TensorCreateInfo i({2}, DataType::INT32);
  i.set_initial_value(int32_t{-1});
  EXPECT_EQ(i.initial_value_bits, 0xffffffffull);

  TensorCreateInfo h({2}, DataType::BF16);
  h.set_initial_value(uint16_t{0x3f80});
  EXPECT_EQ(h.initial_value_bits, 0x3f80u);
  h.set_initial_value(uint16_t{0x0001});  // overwrites, never ORs
  EXPECT_EQ(h.initial_value_bits, 0x0001u);
}

TEST(TensorCreateInfo, BadRankAndDtypeAreRejected) {
  TensorCreateInfo none;
  EXPECT_THAT(none.validate().message(), HasSubstr("ndims 0 outside 1..5"));
  const uint32_t six[] = {1, 1, 1, 1, 1, 1};
  TensorCreateInfo too_many(six, 6);
  EXPECT_THAT(too_many.validate().message(), HasSubstr("ndims 6 outside 1..5"));
  TensorCreateInfo bad_type({4}, static_cast<DataType>(99));
  EXPECT_THAT(bad_type.validate().message(), HasSubstr("dtype value 99"));
}

TEST(TensorCreateInfo, ZeroSizeShapeIsValidAndEmpty) {
  TensorCreateInfo ci({4, 0});
  EXPECT_TRUE(ci.validate().ok());
  EXPECT_EQ(ci.nbytes(), 0u);
}

}  // namespace
}  // namespace taskring
