#include "mailbox.hpp"

#include <algorithm>
#include <cstring>

namespace taskring::node {

void store_status(const Status& s, int32_t* code, uint32_t* length, char* message) {
  *code = static_cast<int32_t>(s.code());
  if (s.ok()) {
    *length = 0;
    return;
  }
  const std::string& text = s.message();
  *length = static_cast<uint32_t>(std::min(text.size(), kMessageBytes));
  std::memcpy(message, text.data(), *length);
}

Status load_status(int32_t code, uint32_t length, const char* message) {
  if (code == 0) return Status::Ok();
  uint32_t n = std::min<uint32_t>(length, kMessageBytes);
  std::string text(message, n);
  if (length == kMessageBytes) text += "...";
  int c = code;
  if (c < 1 || c > static_cast<int>(StatusCode::kUnavailable)) c = static_cast<int>(StatusCode::kInternal);
  return Status(static_cast<StatusCode>(c), std::move(text));
}

}  // namespace taskring::node
