// Comm domains: a set of chips whose kernels reach each other's windows.
//
//   DomainBufferSpec bufs[] = {{"scratch", 1 << 20}, {"signals", 4096}};
//   int chips[] = {0, 1, 2, 3};
//   TASKRING_ASSIGN_OR_RETURN(auto d, o.allocate_domain("tp", chips, 2 << 20, bufs));
//   for (int c : chips) {
//     DomainMember m = *d->member(c);          // rank, size, device_ctx, window
//     args[c].add_scalar(m.device_ctx);        // the kernel's CommContext
//     args[c].add_scalar(*d->buffer_offset("scratch"));
//   }
//   o.submit_next_level_group(callable, args, chips);   // collectives are groups
//   d->release();   // optional: the run's fence sweeps every domain anyway
//
// allocate_domain (Orchestrator) validates everything before allocating
// (name 1..31 bytes; 1..64 distinct chips of this node; window_size in
// [1, 2^34]; buffer names unique and non-empty, buffers > 0 B, and all of
// them, each 64-aligned, within window_size: INVALID_ARGUMENT naming the
// rule). Member i of `chips` gets the dense rank i. Every member maps the
// domain, zeroes its window, then meets the others at a barrier whose
// deadline (NodeConfig::comm_timeout_ms) fails the call naming the domain
// and the ranks that never arrived; the call returns once every window is
// published. Kernels wait with the same deadline, and every wait of the
// domain ends at once (a kernel error) when the run fails.
//
// A domain lives until the run's completion fence, whether the run passed or
// failed; then every member unmaps it (last allocated first), or, after a
// run that passed, the node keeps it mapped for a later allocation of the
// same chips (same order) and window size, which reuses it with every
// window and sync block zeroed again by the node, without the members
// (NodeConfig::domain_cache). release() only records that the
// orchestration is done with it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "taskring/base/expected.hpp"

namespace taskring::node {

inline constexpr int kMaxDomainRanks = 64;

// A member of a domain spanning nodes (L4, Orchestrator::
// allocate_global_domain): chip `chip` of node (MPI rank) `node`.
struct GlobalMember {
  int node = -1;
  int chip = -1;
};

struct DomainBufferSpec {
  std::string name;
  uint64_t bytes = 0;
};

// One member's view, as its chip process sees it. Addresses are in that
// chip's process (each maps the domain at an address of its own).
struct DomainMember {
  int chip = -1;
  int rank = -1;  // dense, 0..size-1, in the order of allocate_domain's chips
  int size = 0;
  uint64_t device_ctx = 0;   // kernels::comm::CommContext*: pass to kernels as a scalar
  uint64_t window_base = 0;  // this rank's window
  uint64_t window_size = 0;  // bytes (page-rounded)
};

class CommDomain {
 public:
  const std::string& name() const { return name_; }
  // Ranks of the domain (every node's members for a global domain).
  int size() const { return nranks_; }
  // Member chips of this node in rank order (all members for a one-node
  // domain; member(chip).rank is the domain rank).
  std::vector<int> chips() const;
  uint64_t window_size() const { return window_size_; }
  // The member on `chip`; NOT_FOUND naming the domain and its members for a
  // chip that is not one.
  Expected<DomainMember> member(int chip) const;
  // The offset of a named buffer in every window; NOT_FOUND for an unknown name.
  Expected<uint64_t> buffer_offset(std::string_view name) const;
  // A named buffer's address in `chip`'s process.
  Expected<uint64_t> buffer(int chip, std::string_view name) const;
  // Marks the domain done; its memory goes at the run's fence regardless.
  void release() { released_ = true; }
  bool released() const { return released_; }
  // True once the run's completion fence has swept the domain (unmapped, or
  // kept in the node's cache, where only a later allocation reaches it):
  // no kernel reaches it through this handle any more. Upstream's "freed".
  bool swept() const { return swept_.load(std::memory_order_acquire); }

 private:
  friend class DomainRegistry;
  std::string name_;
  uint64_t window_size_ = 0;
  int nranks_ = 0;
  std::vector<DomainMember> members_;                      // rank order
  std::vector<std::pair<std::string, uint64_t>> buffers_;  // name, offset
  bool released_ = false;
  std::atomic<bool> swept_{false};  // set by the node's scheduler thread at the fence
};

}  // namespace taskring::node
