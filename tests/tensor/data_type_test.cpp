#include "taskring/tensor/data_type.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace taskring {
namespace {

struct Expect {
  DataType type;
  size_t bytes;
  const char* name;
  const char* upstream;
};

const Expect kAll[] = {
    {DataType::FLOAT32, 4, "FP32", "FLOAT32"},   {DataType::FLOAT16, 2, "FP16", "FLOAT16"},
    {DataType::BFLOAT16, 2, "BF16", "BFLOAT16"}, {DataType::INT8, 1, "INT8", nullptr},
    {DataType::INT16, 2, "INT16", nullptr},      {DataType::INT32, 4, "INT32", nullptr},
    {DataType::INT64, 8, "INT64", nullptr},      {DataType::UINT8, 1, "UINT8", nullptr},
    {DataType::UINT16, 2, "UINT16", nullptr},    {DataType::UINT32, 4, "UINT32", nullptr},
    {DataType::UINT64, 8, "UINT64", nullptr},    {DataType::BOOL, 1, "BOOL", nullptr},
};

TEST(DataType, SizesAndNamesOfEveryType) {
  std::set<int> values;
  for (const Expect& e : kAll) {
    EXPECT_EQ(element_size(e.type), e.bytes) << e.name;
    EXPECT_EQ(data_type_name(e.type), e.name);
    EXPECT_TRUE(is_valid_data_type(e.type));
    values.insert(static_cast<int>(e.type));
  }
  EXPECT_EQ(values.size(), static_cast<size_t>(kNumDataTypes));
}

TEST(DataType, UpstreamWireValuesNeverChange) {
  EXPECT_EQ(static_cast<int>(DataType::FLOAT32), 0);
  EXPECT_EQ(static_cast<int>(DataType::FLOAT16), 1);
  EXPECT_EQ(static_cast<int>(DataType::INT32), 2);
  EXPECT_EQ(static_cast<int>(DataType::BFLOAT16), 6);
  EXPECT_EQ(static_cast<int>(DataType::BOOL), 11);
  EXPECT_EQ(DataType::FP32, DataType::FLOAT32);
  EXPECT_EQ(DataType::BF16, DataType::BFLOAT16);
}

TEST(DataType, ParseAcceptsBothSpellingsAnyCase) {
  for (const Expect& e : kAll) {
    EXPECT_EQ(parse_data_type(e.name), e.type) << e.name;
    std::string lower(e.name);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(parse_data_type(lower), e.type) << lower;
    if (e.upstream) {
      EXPECT_EQ(parse_data_type(e.upstream), e.type) << e.upstream;
    }
  }
  EXPECT_EQ(parse_data_type("bfloat16"), DataType::BF16);
}

TEST(DataType, ParseRejectsUnknownNames) {
  for (const char* bad : {"", "FP64", "float", "INT128", "INVALID", " FP32"}) {
    EXPECT_FALSE(parse_data_type(bad).has_value()) << bad;
  }
}

TEST(DataType, OutOfEnumValueIsInvalid) {
  auto bogus = static_cast<DataType>(200);
  EXPECT_EQ(element_size(bogus), 0u);
  EXPECT_FALSE(is_valid_data_type(bogus));
  EXPECT_EQ(data_type_name(bogus), "INVALID");
}

}  // namespace
}  // namespace taskring
