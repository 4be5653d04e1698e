// Requests to comm-domain peers on other nodes (L4 global domains, sim).
//
// A chip child is forked before MPI starts and never calls MPI, and a window
// on another host has no address here. So put / put_tile / notify / barrier
// arrivals / collective flags aimed at an off-node rank (CommContext::offnode)
// become requests in the sending rank's RemoteRing: a single-producer
// (the chip kernel) single-consumer (its node's MPI progress thread) byte
// ring inside the domain's shared object. The progress thread sends them
// with MPI to the peer's node, in order, whose progress thread applies them
// to the peer's window or sync block and rings the peer's doorbell
// (src/net/domain_service.cpp). Requests of one rank reach every peer in the
// order they were made, so "put, then flag" keeps its meaning.
//
// A full ring makes the kernel wait (spin, then park on its own doorbell,
// which the progress thread rings after draining) with the domain's
// deadline and abort, like every other wait. get / get_tile from an
// off-node peer are not supported (a kernel error names the domain, the
// rank and the peer): the comm kernels that run across nodes push.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "taskring/kernels/comm.hpp"

namespace taskring::kernels::comm {

// Per-rank ring bytes of a domain spanning nodes (header included).
inline constexpr uint64_t kRemoteRingBytes = 1ull << 20;
// Payload of one put request at most; longer puts are split.
inline constexpr uint64_t kRemoteChunkBytes = 64ull << 10;

enum class RemoteOp : uint32_t { kPad = 0, kPut = 1, kNotify = 2, kFlag = 3, kBarrier = 4 };

// One request; `len` payload bytes follow, the entry padded to 32 bytes.
struct RemoteReq {
  uint32_t op;     // RemoteOp
  int32_t peer;    // domain rank the request is for
  uint64_t off;    // kPut, kNotify: window offset
  uint64_t len;    // kPut: payload bytes; kPad: bytes to skip after the header
  uint64_t value;  // kNotify: op << 32 | value; kFlag: token; kBarrier: epoch
};
static_assert(sizeof(RemoteReq) == 32);

struct RemoteRing {
  alignas(64) std::atomic<uint64_t> head;  // bytes produced (the kernel)
  alignas(64) std::atomic<uint64_t> tail;  // bytes consumed (the progress thread)
  alignas(64) uint64_t capacity;           // bytes of data[]; a multiple of 32
  alignas(64) char data[8];                // capacity bytes (the rest of the ring's region)

  static constexpr uint64_t kDataOffset = 192;
  static uint64_t capacity_for(uint64_t ring_bytes) { return (ring_bytes - kDataOffset) / 32 * 32; }
};
static_assert(offsetof(RemoteRing, data) == RemoteRing::kDataOffset);

inline uint64_t remote_entry_bytes(uint64_t payload) { return sizeof(RemoteReq) + (payload + 31) / 32 * 32; }

// The kernel side (comm.cpp calls these for off-node peers; arguments are
// already checked there).
bool remote_put(const KernelArgs& k, const CommContext& c, int peer, uint64_t dst_off, const void* src, uint64_t bytes);
bool remote_put_tile(const KernelArgs& k, const CommContext& c, int peer, uint64_t dst_off, const tile::View2D& src);
bool remote_notify(const KernelArgs& k, const CommContext& c, int peer, uint64_t off, NotifyOp op, uint32_t value);
bool remote_sync(const KernelArgs& k, const CommContext& c, int peer, RemoteOp op, uint32_t value);
// post_flag has no KernelArgs: on a deadline or abort the flag is dropped
// and the waits that follow report it.
void remote_post_flag(const CommContext& c, int peer, uint32_t tok);
bool remote_unsupported(const KernelArgs& k, const CommContext& c, int peer, const char* what);

}  // namespace taskring::kernels::comm
