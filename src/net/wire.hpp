// Wire: the L4 messages between ranks and their encoding.
//
// Every control message travels on tag kTagMsg of the worker's communicator
// as one MPI message of bytes: a header (magic, type) and fields appended in
// order. Ranks run the same build (checked in HELLO), so fixed-size fields
// are copied in host byte order; every read is bounds-checked and a short or
// malformed message is an error, never an overread. Bulk data travels as
// separate messages on per-transfer tags (>= kTagDataBase).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "taskring/base/status.hpp"

namespace taskring::net {

inline constexpr int kTagMsg = 1;
// TASK and COMPLETION between ranks that reach each other's doorbells under
// MPI_THREAD_MULTIPLE: received by the executor / the engine themselves
// (transport.hpp, Transport::Channel).
inline constexpr int kTagTask = 2;
inline constexpr int kTagCompletion = 3;
inline constexpr int kTagDataBase = 64;
// Data tags are kTagDataBase + [0, 2^24) (Transport::next_tag); the owner's
// replies to a direct transfer (FETCH_REPLY, PUT_READY, PUT_DONE) travel on
// reply_tag(tag), above every data tag.
inline constexpr int kReplyTagOffset = 1 << 24;
inline constexpr int reply_tag(int data_tag) { return data_tag + kReplyTagOffset; }
inline constexpr uint32_t kWireMagic = 0x344c5254;  // "TRL4"
// Longest control message accepted (a task is ~5 KiB).
inline constexpr size_t kMaxMessageBytes = 1 << 20;

enum class Msg : uint8_t {
  kHello = 1,         // rank -> 0: who I am, my node's init result
  kWelcome = 2,       // 0 -> rank: READY, or the startup error
  kTask = 3,          // 0 -> rank: run a node task
  kCompletion = 4,    // rank -> 0: its Status
  kControl = 5,       // 0 -> rank: buffer alloc / free
  kControlReply = 6,  // rank -> 0
  kFetch = 7,         // any -> owner: send me a range (data follows on the tag)
  kFetchReply = 8,    // owner -> requester: OK (data follows) or why not
  kPut = 9,           // any -> owner: I want to write a range
  kPutReady = 10,     // owner -> requester: receive posted (send the data), or why not
  kPutDone = 11,      // owner -> requester: the data landed
  kHeartbeat = 12,
  kShutdown = 13,  // 0 -> rank
  kBye = 14,       // rank -> 0: closing
  // Comm domains spanning nodes (domain_service.hpp), between member ranks.
  kDomainArrived = 15,  // these domain ranks of mine zeroed their windows
  kDomainData = 16,     // requests of my members to yours (puts, notifies, flags)
  kDomainAbort = 17,    // my run failed: end every wait of the domain
  kDomainShare = 18,    // host leader -> nodes of its host: map my part, it is ours
};
std::string_view msg_name(Msg m);

enum class ControlOp : uint32_t { kAlloc = 1, kFree = 2 };

class Writer {
 public:
  explicit Writer(Msg type) {
    buf_.reserve(256);  // most messages fit; also keeps GCC 12's -Wstringop-overflow false positive quiet
    put(kWireMagic);
    put(static_cast<uint8_t>(type));
  }
  template <typename T>
  Writer& put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const char* p = reinterpret_cast<const char*>(&v);
    buf_.insert(buf_.end(), p, p + sizeof(T));
    return *this;
  }
  // A length-prefixed string, cut to `max` bytes.
  Writer& str(std::string_view s, size_t max = 4096);
  std::vector<char> take() { return std::move(buf_); }

 private:
  std::vector<char> buf_;
};

class Reader {
 public:
  Reader(const char* data, size_t size) : p_(data), end_(data + size) {}
  // The header; false (and error()) when it is not a taskring L4 message.
  bool header(Msg* type);
  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v{};
    if (!ok_ || static_cast<size_t>(end_ - p_) < sizeof(T)) {
      ok_ = false;
      return v;
    }
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  std::string str(size_t max = 4096);
  // `n` raw bytes in place (valid while the message is), nullptr when short.
  const char* bytes(size_t n) {
    if (!ok_ || static_cast<size_t>(end_ - p_) < n) {
      ok_ = false;
      return nullptr;
    }
    const char* at = p_;
    p_ += n;
    return at;
  }
  size_t left() const { return static_cast<size_t>(end_ - p_); }
  bool ok() const { return ok_; }
  void fail() { ok_ = false; }
  // INVALID_ARGUMENT naming the message when a read ran short.
  Status error(std::string_view what) const;

 private:
  const char* p_;
  const char* end_;
  bool ok_ = true;
};

// `s` cut to kMaxErrorBytes, ending with "[truncated]" when cut.
std::string truncate_error(std::string_view s);

}  // namespace taskring::net
