// Percent-encoding of STRACE text fields with whole-unit truncation.
//
// A "unit" is one output byte, or the three bytes of a %XX escape. Bytes
// outside 0x20..0x7E and any of `% [ ]` are always escaped (uppercase hex);
// space and `=` are escaped in names and in attribute keys/values, and appear
// literally only as the attribute grammar's separators. So an injected
// "\n[STRACE]" becomes "%0A%5BSTRACE%5D" and can never forge a record.
//
// A field has a capacity in encoded bytes. When the next unit does not fit,
// encoding stops; if the field is then exactly full its last unit is dropped
// whole, and "~" is appended. The result never exceeds the capacity and never
// ends in a split escape such as "%0~".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace taskring::log {

// Appends units to a caller-owned buffer of `capacity` bytes.
class FieldEncoder {
 public:
  FieldEncoder(char* out, size_t capacity) : out_(out), capacity_(capacity) {}
  // Resumes encoding into a field that already holds `size` bytes.
  FieldEncoder(char* out, size_t capacity, size_t size, size_t last_unit, bool truncated)
      : out_(out), capacity_(capacity), size_(size), last_unit_(last_unit), truncated_(truncated) {}

  // Appends `text`, escaping space and '=' too (name rules).
  void put_text(std::string_view text);
  // Appends one literal grammar byte (' ' or '=' in attributes).
  void put_separator(char c);

  size_t size() const { return size_; }
  size_t last_unit() const { return last_unit_; }
  bool truncated() const { return truncated_; }

 private:
  void put_unit(const char* unit, size_t n);

  char* out_;
  size_t capacity_;
  size_t size_ = 0;
  size_t last_unit_ = 0;
  bool truncated_ = false;
};

// `text` encoded under name rules into at most `capacity` bytes.
std::string encode_name(std::string_view text, size_t capacity);

}  // namespace taskring::log
