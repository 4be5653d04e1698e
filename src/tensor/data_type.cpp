#include "taskring/tensor/data_type.hpp"

#include <cctype>
#include <string>

namespace taskring {

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
