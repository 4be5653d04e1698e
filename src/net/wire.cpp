#include "wire.hpp"

#include "taskring/net/net_worker.hpp"

namespace taskring::net {

std::string_view msg_name(Msg m) {
  switch (m) {
    case Msg::kHello: return "HELLO";
    case Msg::kWelcome: return "WELCOME";
    case Msg::kTask: return "TASK";
    case Msg::kCompletion: return "COMPLETION";
    case Msg::kControl: return "CONTROL";
    case Msg::kControlReply: return "CONTROL_REPLY";
    case Msg::kFetch: return "FETCH";
    case Msg::kFetchReply: return "FETCH_REPLY";
    case Msg::kPut: return "PUT";
    case Msg::kPutReady: return "PUT_READY";
    case Msg::kPutDone: return "PUT_DONE";
    case Msg::kHeartbeat: return "HEARTBEAT";
    case Msg::kShutdown: return "SHUTDOWN";
    case Msg::kBye: return "BYE";
    case Msg::kDomainArrived: return "DOMAIN_ARRIVED";
    case Msg::kDomainData: return "DOMAIN_DATA";
    case Msg::kDomainAbort: return "DOMAIN_ABORT";
    case Msg::kDomainShare: return "DOMAIN_SHARE";
  }
  return "unknown";
}

Writer& Writer::str(std::string_view s, size_t max) {
  if (s.size() > max) s = s.substr(0, max);
  put(static_cast<uint32_t>(s.size()));
  buf_.insert(buf_.end(), s.begin(), s.end());
  return *this;
}

bool Reader::header(Msg* type) {
  const uint32_t magic = get<uint32_t>();
  const uint8_t t = get<uint8_t>();
  if (!ok_ || magic != kWireMagic || t < static_cast<uint8_t>(Msg::kHello) ||
      t > static_cast<uint8_t>(Msg::kDomainShare)) {
    ok_ = false;
    return false;
  }
  *type = static_cast<Msg>(t);
  return true;
}

std::string Reader::str(size_t max) {
  const uint32_t n = get<uint32_t>();
  if (!ok_ || n > max || static_cast<size_t>(end_ - p_) < n) {
    ok_ = false;
    return {};
  }
  std::string s(p_, n);
  p_ += n;
  return s;
}

Status Reader::error(std::string_view what) const {
  return invalid_argument("malformed " + std::string(what) + " message (short or out-of-bounds field)");
}

std::string truncate_error(std::string_view s) {
  constexpr std::string_view kCut = " [truncated]";
  if (s.size() <= kMaxErrorBytes) return std::string(s);
  return std::string(s.substr(0, kMaxErrorBytes - kCut.size())) + std::string(kCut);
}

}  // namespace taskring::net
