// Kernel side of requests to off-node peers (see comm_remote.hpp).
#include "taskring/kernels/comm_remote.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "taskring/base/clock.hpp"
#include "taskring/base/shared_futex.hpp"
#include "taskring/base/waiter.hpp"

namespace taskring::kernels::comm {

namespace {

constexpr uint64_t kParkSliceNs = 50'000'000;  // re-check abort/deadline at least this often
constexpr uint32_t kSpin = 200;

RemoteRing& ring_of(const CommContext& c) { return *reinterpret_cast<RemoteRing*>(c.ring); }

// Why the wait for ring room ended early, or "" when there is room.
std::string wait_room(const CommContext& c, uint64_t total) {
  RemoteRing& r = ring_of(c);
  auto room = [&] {
    return r.capacity - (r.head.load(std::memory_order_relaxed) - r.tail.load(std::memory_order_acquire)) >= total;
  };
  for (uint32_t i = 0; i < kSpin; ++i) {
    if (room()) return {};
    Waiter::cpu_relax();
  }
  // The progress thread rings this rank's own doorbell after each drain.
  CommBell& bell = sync_of(c, c.rank).bell;
  const Deadline deadline = Deadline::after_ns(c.timeout_ns);
  while (true) {
    bell.parked.fetch_add(1, std::memory_order_seq_cst);
    const uint32_t seen = bell.epoch.load(std::memory_order_seq_cst);
    const bool ok = room();
    const uint32_t aborted = header_of(c).abort.load(std::memory_order_acquire);
    const uint64_t left = deadline.remaining_ns();
    if (ok || aborted != 0 || left == 0) {
      bell.parked.fetch_sub(1, std::memory_order_relaxed);
      if (ok) return {};
      if (aborted != 0) return "full, and aborted: a member of the run failed";
      return "full, deadline of " + std::to_string(c.timeout_ns / 1000000) + " ms passed";
    }
    shared_futex_wait(&bell.epoch, seen, std::min(left, kParkSliceNs));
    bell.parked.fetch_sub(1, std::memory_order_relaxed);
  }
}

// Appends one request (and its payload) to this rank's ring, waiting for
// room; "" on success, else why not.
std::string enqueue(const CommContext& c, const RemoteReq& req, const void* payload, uint64_t len) {
  RemoteRing& r = ring_of(c);
  const uint64_t cap = r.capacity, need = remote_entry_bytes(len);
  if (need > cap / 2)
    return "a request of " + std::to_string(need) + " B does not fit the ring of " + std::to_string(cap) + " B";
  uint64_t h = r.head.load(std::memory_order_relaxed);
  const uint64_t pos = h % cap, contiguous = cap - pos;
  const bool pad = contiguous < need;  // entries never wrap: skip to the start
  const std::string why = wait_room(c, need + (pad ? contiguous : 0));
  if (!why.empty()) return why;
  if (pad) {
    RemoteReq p{static_cast<uint32_t>(RemoteOp::kPad), -1, 0, contiguous - sizeof(RemoteReq), 0};
    std::memcpy(r.data + pos, &p, sizeof(p));
    h += contiguous;
  }
  char* at = r.data + h % cap;
  std::memcpy(at, &req, sizeof(req));
  if (len != 0) std::memcpy(at + sizeof(req), payload, len);
  r.head.store(h + need, std::memory_order_release);
  // The node's progress thread parks on the header bell (domain_service.cpp).
  ring(header_of(c).bell);
  return {};
}

bool report(const KernelArgs& k, const CommContext& c, int peer, const char* what, const std::string& why) {
  return k.fail(TASKRING_KERNEL_ERR_DEADLINE, "domain '%s' rank %d: %s to off-node rank %d: request ring: %s",
                domain_name(c), c.rank, what, peer, why.c_str());
}

}  // namespace

bool remote_put(const KernelArgs& k, const CommContext& c, int peer, uint64_t dst_off, const void* src,
                uint64_t bytes) {
  const char* p = static_cast<const char*>(src);
  // Chunks of at most a quarter of the ring, so a full ring drains into room.
  const uint64_t chunk = std::min(kRemoteChunkBytes, ring_of(c).capacity / 4 - sizeof(RemoteReq));
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t n = std::min(chunk, bytes - done);
    const RemoteReq req{static_cast<uint32_t>(RemoteOp::kPut), peer, dst_off + done, n, 0};
    const std::string why = enqueue(c, req, p + done, n);
    if (!why.empty()) return report(k, c, peer, "put", why);
    done += n;
  }
  return true;
}

bool remote_put_tile(const KernelArgs& k, const CommContext& c, int peer, uint64_t dst_off, const tile::View2D& src) {
  const uint64_t es = src.elem_size(), row = static_cast<uint64_t>(src.cols) * es;
  std::vector<char> packed(row * static_cast<uint64_t>(src.rows));
  char* d = packed.data();
  for (int64_t r = 0; r < src.rows; ++r, d += row) {
    if (src.unit_col_stride()) {
      std::memcpy(d, src.at(r, 0), row);
    } else {
      for (int64_t j = 0; j < src.cols; ++j) std::memcpy(d + j * es, src.at(r, j), es);
    }
  }
  return remote_put(k, c, peer, dst_off, packed.data(), packed.size());
}

bool remote_notify(const KernelArgs& k, const CommContext& c, int peer, uint64_t off, NotifyOp op, uint32_t value) {
  if (op != NotifyOp::kAdd && op != NotifyOp::kSet)
    return k.fail(TASKRING_KERNEL_ERR_INVALID_ARGUMENT, "notify: op %u is not set (0) or add (1)",
                  static_cast<uint32_t>(op));
  const RemoteReq req{static_cast<uint32_t>(RemoteOp::kNotify), peer, off, 0,
                      (static_cast<uint64_t>(op) << 32) | value};
  const std::string why = enqueue(c, req, nullptr, 0);
  return why.empty() || report(k, c, peer, "notify", why);
}

bool remote_sync(const KernelArgs& k, const CommContext& c, int peer, RemoteOp op, uint32_t value) {
  const RemoteReq req{static_cast<uint32_t>(op), peer, 0, 0, value};
  const std::string why = enqueue(c, req, nullptr, 0);
  return why.empty() || report(k, c, peer, op == RemoteOp::kBarrier ? "barrier" : "flag", why);
}

void remote_post_flag(const CommContext& c, int peer, uint32_t tok) {
  const RemoteReq req{static_cast<uint32_t>(RemoteOp::kFlag), peer, 0, 0, tok};
  (void)enqueue(c, req, nullptr, 0);
}

bool remote_unsupported(const KernelArgs& k, const CommContext& c, int peer, const char* what) {
  return k.fail(TASKRING_KERNEL_ERR_UNSUPPORTED,
                "domain '%s' rank %d: %s from rank %d, which is on another node, is not supported (off-node peers "
                "are written with put / notify, never read)",
                domain_name(c), c.rank, what, peer);
}

}  // namespace taskring::kernels::comm
