// ChipTensor layout and views.
#include "taskring/tensor/chip_tensor.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <type_traits>

namespace taskring {
namespace {

using ::testing::HasSubstr;

// A 4x6 FP32 row-major tensor over a fake host address.
ChipTensor matrix() {
  auto r = try_make_tensor(0x10000, 4 * 6 * 4, std::array<uint32_t, 2>{4, 6});
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return *r;
}

uint64_t offset_of(const ChipTensor& t, std::initializer_list<uint32_t> c) {
  return t.element_offset(std::span<const uint32_t>(c.begin(), c.size()));
}

TEST(ChipTensorLayout, Is128TriviallyCopyableBytes) {
  EXPECT_EQ(sizeof(ChipTensor), 128u);
  EXPECT_EQ(alignof(ChipTensor), 64u);
  EXPECT_TRUE(std::is_trivially_copyable_v<ChipTensor>);
  ChipTensor a = matrix();
  ChipTensor b;
  std::memcpy(&b, &a, sizeof(a));
  EXPECT_EQ(b.describe(), a.describe());
}

TEST(ChipTensorLayout, RowMajorQueries) {
  ChipTensor t = matrix();
  EXPECT_EQ(t.ndims, 2u);
  EXPECT_EQ(t.numel(), 24u);
  EXPECT_EQ(t.strides[0], 6u);
  EXPECT_EQ(t.strides[1], 1u);
  EXPECT_TRUE(t.is_contiguous);
  EXPECT_EQ(t.extent_bytes(), 96u);
  EXPECT_EQ(t.data_addr(), 0x10000u);
  EXPECT_EQ(offset_of(t, {2, 3}), 15u);
  EXPECT_FALSE(t.is_poisoned());
  EXPECT_TRUE(t.validate().ok());
  EXPECT_THAT(t.describe(), HasSubstr("FP32[4x6 strides 6,1 +0]"));
}

TEST(ChipTensorView, WindowMovesStartAndKeepsStrides) {
  ChipTensor t = matrix();
  auto v = t.try_view(std::array<uint32_t, 2>{2, 3}, std::array<uint32_t, 2>{1, 2});
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  EXPECT_EQ(v->start_offset, 8u);
  EXPECT_EQ(v->shapes[0], 2u);
  EXPECT_EQ(v->shapes[1], 3u);
  EXPECT_EQ(v->strides[0], 6u);
  EXPECT_FALSE(v->is_contiguous);
  EXPECT_EQ(v->extent_elem_cache, 1u + 6u + 2u);
  EXPECT_EQ(v->buffer.addr, t.buffer.addr);  // never copies
  EXPECT_EQ(offset_of(*v, {1, 2}), offset_of(t, {2, 4}));
  EXPECT_TRUE(v->validate().ok());
  // Upstream spelling gives the same descriptor.
  ChipTensor u = t.view({2, 3}, {1, 2});
  EXPECT_EQ(u.describe(), v->describe());
  uint32_t s[] = {2, 3}, o[] = {1, 2};
  EXPECT_EQ(t.view(s, o).describe(), v->describe());
}

TEST(ChipTensorView, OutOfRangeAndRankMismatch) {
  ChipTensor t = matrix();
  auto r = t.try_view(std::array<uint32_t, 2>{2, 3}, std::array<uint32_t, 2>{3, 0});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("view: window leaves the source tensor"));
  EXPECT_THAT(r.status().message(), HasSubstr("FP32[4x6"));
  EXPECT_EQ(t.view({2, 3}, {3, 0}).poison, ViewError::kOutOfRange);
  EXPECT_EQ(t.view({5, 1}, {0, 0}).poison, ViewError::kOutOfRange);
  // Offsets near UINT32_MAX must not wrap around into range.
  EXPECT_EQ(t.view({1, 1}, {0xffffffffu, 0}).poison, ViewError::kOutOfRange);
  auto rank = t.try_view(std::array<uint32_t, 1>{2}, std::array<uint32_t, 1>{0});
  ASSERT_FALSE(rank.ok());
  EXPECT_THAT(rank.status().message(), HasSubstr("rank"));
  EXPECT_EQ(t.view({2}, {0}).poison, ViewError::kBadRank);
}

TEST(ChipTensorView, ZeroSizeWindowIsValidAnywhere) {
  ChipTensor t = matrix();
  ChipTensor z = t.view({0, 3}, {100, 100});
  ASSERT_FALSE(z.is_poisoned());
  EXPECT_EQ(z.numel(), 0u);
  EXPECT_EQ(z.extent_bytes(), 0u);
  EXPECT_EQ(z.start_offset, t.start_offset);
  EXPECT_TRUE(z.is_contiguous);
  EXPECT_TRUE(z.validate().ok());
  // An empty tensor reshapes to any other empty shape.
  EXPECT_FALSE(z.reshape({3, 0, 2}).is_poisoned());
  EXPECT_EQ(z.reshape({1}).poison, ViewError::kNumelMismatch);
}

TEST(ChipTensorSlice, StepsMultiplyTheStride) {
  ChipTensor t = matrix();
  auto s = t.try_slice(1, 1, 6, 2);  // columns 1, 3, 5
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->shapes[1], 3u);
  EXPECT_EQ(s->strides[1], 2u);
  EXPECT_EQ(s->start_offset, 1u);
  EXPECT_EQ(offset_of(*s, {3, 2}), offset_of(t, {3, 5}));
  EXPECT_TRUE(s->validate().ok());
  ChipTensor rows = t.slice(0, 2, 4);
  EXPECT_EQ(rows.shapes[0], 2u);
  EXPECT_EQ(rows.start_offset, 12u);
  EXPECT_TRUE(rows.is_contiguous);
  ChipTensor empty = t.slice(0, 2, 2);
  EXPECT_FALSE(empty.is_poisoned());
  EXPECT_EQ(empty.numel(), 0u);
}

TEST(ChipTensorSlice, ErrorsCarryTheirExactReason) {
  ChipTensor t = matrix();
  EXPECT_EQ(t.slice(2, 0, 1).poison, ViewError::kBadDimension);
  EXPECT_EQ(t.slice(0, 0, 4, 0).poison, ViewError::kBadStep);
  EXPECT_EQ(t.slice(0, 3, 2).poison, ViewError::kOutOfRange);
  EXPECT_EQ(t.slice(0, 0, 5).poison, ViewError::kOutOfRange);
  EXPECT_THAT(t.try_slice(0, 0, 4, 0).status().message(), HasSubstr("slice: slice step is 0"));
  EXPECT_THAT(t.try_slice(7, 0, 1).status().message(), HasSubstr("slice: dimension index out of range"));
  // A big step on a big stride overflows the u32 stride field.
  auto wide = try_make_tensor(0, uint64_t{4} << 34, std::array<uint32_t, 2>{3, 1u << 31}, DataType::UINT8);
  ASSERT_TRUE(wide.ok()) << wide.status().to_string();
  EXPECT_EQ(wide->slice(0, 0, 3, 2).poison, ViewError::kStrideOverflow);
}

TEST(ChipTensorTranspose, SwapsShapesAndStrides) {
  ChipTensor t = matrix();
  ChipTensor tt = t.transpose();
  ASSERT_FALSE(tt.is_poisoned());
  EXPECT_EQ(tt.shapes[0], 6u);
  EXPECT_EQ(tt.shapes[1], 4u);
  EXPECT_EQ(tt.strides[0], 1u);
  EXPECT_EQ(tt.strides[1], 6u);
  EXPECT_FALSE(tt.is_contiguous);
  EXPECT_EQ(offset_of(tt, {5, 3}), offset_of(t, {3, 5}));
  EXPECT_EQ(tt.extent_bytes(), t.extent_bytes());
  EXPECT_EQ(t.transpose(0, 2).poison, ViewError::kBadDimension);
  EXPECT_THAT(t.try_transpose(3, 0).status().message(), HasSubstr("transpose"));
  EXPECT_TRUE(t.transpose(1, 1).is_contiguous);
}

TEST(ChipTensorPermute, ReordersDims) {
  auto t3 = try_make_tensor(0x1000, 2 * 3 * 4 * 2, std::array<uint32_t, 3>{2, 3, 4}, DataType::FP16);
  ASSERT_TRUE(t3.ok());
  ChipTensor p = t3->permute({2, 0, 1});
  ASSERT_FALSE(p.is_poisoned());
  EXPECT_EQ(p.shapes[0], 4u);
  EXPECT_EQ(p.shapes[1], 2u);
  EXPECT_EQ(p.shapes[2], 3u);
  EXPECT_EQ(p.strides[0], 1u);
  EXPECT_EQ(p.strides[1], 12u);
  EXPECT_EQ(p.strides[2], 4u);
  EXPECT_EQ(offset_of(p, {3, 1, 2}), offset_of(*t3, {1, 2, 3}));
  EXPECT_TRUE(t3->permute({0, 1, 2}).is_contiguous);
  EXPECT_EQ(t3->permute({0, 0, 1}).poison, ViewError::kBadPermutation);
  EXPECT_EQ(t3->permute({0, 1, 3}).poison, ViewError::kBadPermutation);
  EXPECT_EQ(t3->permute({0, 1}).poison, ViewError::kBadRank);
  EXPECT_THAT(t3->try_permute(std::array<uint32_t, 3>{1, 1, 0}).status().message(), HasSubstr("not a permutation"));
}

TEST(ChipTensorReshape, ContiguousOnly) {
  ChipTensor t = matrix();
  ChipTensor r = t.reshape({2, 3, 4});
  ASSERT_FALSE(r.is_poisoned());
  EXPECT_EQ(r.ndims, 3u);
  EXPECT_EQ(r.strides[0], 12u);
  EXPECT_EQ(r.strides[1], 4u);
  EXPECT_EQ(r.strides[2], 1u);
  EXPECT_EQ(r.shapes[3], 0u);
  EXPECT_EQ(r.strides[3], 0u);
  EXPECT_TRUE(r.validate().ok());
  ChipTensor flat = t.reshape({24});
  EXPECT_EQ(flat.numel(), 24u);
  // A row slice is still contiguous and keeps its start offset.
  ChipTensor rows = t.slice(0, 1, 3).reshape({12});
  ASSERT_FALSE(rows.is_poisoned());
  EXPECT_EQ(rows.start_offset, 6u);

  EXPECT_EQ(t.transpose().reshape({24}).poison, ViewError::kNotContiguous);
  EXPECT_EQ(t.view({2, 3}, {0, 0}).reshape({6}).poison, ViewError::kNotContiguous);
  EXPECT_EQ(t.reshape({5, 5}).poison, ViewError::kNumelMismatch);
  EXPECT_EQ(t.reshape({1, 1, 1, 1, 1, 24}).poison, ViewError::kBadRank);
  EXPECT_EQ(t.reshape(std::span<const uint32_t>()).poison, ViewError::kBadRank);
  // A product that overflows u64 is a mismatch, not a wrap to 24.
  EXPECT_EQ(t.reshape({0xffffffffu, 0xffffffffu, 0xffffffffu, 24}).poison, ViewError::kNumelMismatch);
  EXPECT_THAT(t.transpose().try_reshape(std::array<uint32_t, 1>{24}).status().message(),
              HasSubstr("reshape: reshape of a non-contiguous view"));
}

TEST(ChipTensorPoison, RejectedViewsCarryTheExactReasonIntoValidate) {
  ChipTensor t = matrix();
  struct Case {
    ChipTensor bad;
    ViewError why;
  };
  const Case cases[] = {
      {t.view({9, 9}, {0, 0}), ViewError::kOutOfRange},
      {t.view({1}, {0}), ViewError::kBadRank},
      {t.slice(5, 0, 1), ViewError::kBadDimension},
      {t.slice(0, 0, 1, 0), ViewError::kBadStep},
      {t.transpose(0, 9), ViewError::kBadDimension},
      {t.permute({1, 1}), ViewError::kBadPermutation},
      {t.transpose().reshape({24}), ViewError::kNotContiguous},
      {t.reshape({7}), ViewError::kNumelMismatch},
  };
  for (const Case& c : cases) {
    EXPECT_TRUE(c.bad.is_poisoned());
    EXPECT_EQ(c.bad.poison, c.why) << view_error_name(c.why);
    EXPECT_EQ(c.bad.buffer.addr, 0u);  // never a wild pointer
    Status s = c.bad.validate();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("rejected view"));
    EXPECT_THAT(s.message(), HasSubstr(std::string(view_error_name(c.why))));
  }
}

TEST(ChipTensorPoison, ViewsOfPoisonKeepTheOriginalReason) {
  ChipTensor bad = matrix().slice(0, 0, 1, 0);
  ASSERT_EQ(bad.poison, ViewError::kBadStep);
  EXPECT_EQ(bad.view({1, 1}, {0, 0}).poison, ViewError::kBadStep);
  EXPECT_EQ(bad.slice(0, 0, 1).poison, ViewError::kBadStep);
  EXPECT_EQ(bad.transpose().poison, ViewError::kBadStep);
  EXPECT_EQ(bad.permute({1, 0}).poison, ViewError::kBadStep);
  EXPECT_EQ(bad.reshape({1}).poison, ViewError::kBadStep);
  auto checked = bad.try_transpose();
  ASSERT_FALSE(checked.ok());
  EXPECT_THAT(checked.status().message(), HasSubstr("transpose"));
  EXPECT_THAT(checked.status().message(), HasSubstr("slice step is 0"));
}

TEST(ChipTensorValidate, HandBuiltDescriptorsAreChecked) {
  ChipTensor t = matrix();
  ChipTensor zero_stride = t;
  zero_stride.strides[1] = 0;
  EXPECT_THAT(zero_stride.validate().message(), HasSubstr("stride is 0"));
  ChipTensor no_rank = t;
  no_rank.ndims = 0;
  EXPECT_THAT(no_rank.validate().message(), HasSubstr("rank"));
  ChipTensor six = t;
  six.ndims = 6;
  EXPECT_FALSE(six.validate().ok());
  ChipTensor bad_type = t;
  bad_type.dtype = static_cast<DataType>(77);
  EXPECT_THAT(bad_type.validate().message(), HasSubstr("dtype"));
  ChipTensor small = t;
  small.buffer.size = 95;
  EXPECT_THAT(small.validate().message(), HasSubstr("exceeds the buffer"));
  // A stale extent cache does not hide an out-of-buffer shape.
  ChipTensor stale = t;
  stale.shapes[0] = 40;
  EXPECT_FALSE(stale.validate().ok());
  ChipTensor huge_offset = t;
  huge_offset.start_offset = UINT64_MAX - 2;
  EXPECT_FALSE(huge_offset.validate().ok());
}

TEST(ViewErrorNames, EveryReasonHasAName) {
  for (uint32_t i = 0; i <= static_cast<uint32_t>(ViewError::kZeroStride); ++i) {
    EXPECT_NE(view_error_name(static_cast<ViewError>(i)), "unknown") << i;
  }
}

}  // namespace
}  // namespace taskring
