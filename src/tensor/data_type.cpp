#include "taskring/tensor/data_type.hpp"

#include <cctype>
#include <string>

namespace taskring {

std::string_view data_type_name(DataType t) {
  switch (t) {
    case DataType::FLOAT32: return "FP32";
    case DataType::FLOAT16: return "FP16";
    case DataType::INT32: return "INT32";
    case DataType::INT16: return "INT16";
    case DataType::INT8: return "INT8";
    case DataType::UINT8: return "UINT8";
    case DataType::BFLOAT16: return "BF16";
    case DataType::INT64: return "INT64";
    case DataType::UINT64: return "UINT64";
    case DataType::UINT16: return "UINT16";
    case DataType::UINT32: return "UINT32";
    case DataType::BOOL: return "BOOL";
  }
  return "INVALID";
}

std::optional<DataType> parse_data_type(std::string_view name) {
  std::string up(name);
  for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (up == "FLOAT32") return DataType::FLOAT32;
  if (up == "FLOAT16") return DataType::FLOAT16;
  if (up == "BFLOAT16") return DataType::BFLOAT16;
  for (int i = 0; i < kNumDataTypes; ++i) {
    auto t = static_cast<DataType>(i);
    if (up == data_type_name(t)) return t;
  }
  return std::nullopt;
}

}  // namespace taskring
