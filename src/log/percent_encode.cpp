#include "taskring/log/percent_encode.hpp"

#include <cstring>

namespace taskring::log {

void FieldEncoder::put_unit(const char* unit, size_t n) {
  if (truncated_) return;
  if (size_ + n > capacity_) {
    truncated_ = true;
    if (capacity_ == 0) return;
    // Make room for the marker by dropping a whole unit, never part of one.
    if (size_ == capacity_) size_ -= last_unit_;
    out_[size_++] = '~';
    return;
  }
  std::memcpy(out_ + size_, unit, n);
  size_ += n;
  last_unit_ = n;
}

namespace {

struct SafeTable {
  bool safe[256];
  constexpr SafeTable() : safe() {
    for (int c = 0x20; c <= 0x7E; ++c) safe[c] = c != '%' && c != '[' && c != ']' && c != ' ' && c != '=';
  }
};
constexpr SafeTable kSafe;

}  // namespace

void FieldEncoder::put_text(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end && !truncated_) {
    // Copy the longest run of safe bytes that fits in one go.
    const char* run = p;
    while (run < end && kSafe.safe[static_cast<unsigned char>(*run)]) ++run;
    size_t n = static_cast<size_t>(run - p);
    if (n > 0) {
      size_t fit = n <= capacity_ - size_ ? n : capacity_ - size_;
      std::memcpy(out_ + size_, p, fit);
      size_ += fit;
      if (fit > 0) last_unit_ = 1;
      p += fit;
      if (fit < n) {
        put_unit(p, 1);  // does not fit: truncates
        return;
      }
      continue;
    }
    const auto c = static_cast<unsigned char>(*p++);
    const char esc[3] = {'%', kHex[c >> 4], kHex[c & 0x0F]};
    put_unit(esc, 3);
  }
}

void FieldEncoder::put_separator(char c) { put_unit(&c, 1); }

std::string encode_name(std::string_view text, size_t capacity) {
  std::string out(capacity, '\0');
  FieldEncoder enc(out.data(), capacity);
  enc.put_text(text);
  out.resize(enc.size());
  return out;
}

}  // namespace taskring::log
