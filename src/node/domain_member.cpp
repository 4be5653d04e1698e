#include "domain_member.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "fd_passing.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/base/shared_futex.hpp"
#include "taskring/base/waiter.hpp"
#include "taskring/kernels/comm_remote.hpp"

namespace taskring::node {

namespace cm = kernels::comm;

namespace {

constexpr uint64_t kSliceNs = 50'000'000;
constexpr uint64_t kPageBytes = 4096;

std::string missing_ranks(const cm::DomainHeader& h) {
  std::string s;
  for (int r = 0; r < h.nranks; ++r)
    if (h.arrived[r].load(std::memory_order_acquire) == 0) s += (s.empty() ? "" : ",") + std::to_string(r);
  return s;
}

// MADV_POPULATE_WRITE fills this process's page table, which is enough on
// bare metal and under nested paging. Under shadow paging (a PVM guest, as
// on the CI machines) the hypervisor's copy of each entry is built on the
// first access instead, one exit per page: hundreds of them per MoE step,
// measured as most of the step's time. A locked add of zero writes every
// page without changing a byte, so it is safe while peers already put into
// their windows. Best effort: the populate is skipped where the kernel lacks
// it, and the touch still maps every page.
void prefault_for_write(char* base, uint64_t bytes) {
  (void)madvise(base, bytes, MADV_POPULATE_WRITE);
  for (uint64_t off = 0; off < bytes; off += kPageBytes)
    __atomic_fetch_add(reinterpret_cast<uint64_t*>(base + off), uint64_t{0}, __ATOMIC_RELAXED);
}

}  // namespace

DomainMembership::~DomainMembership() {
  for (auto& [id, m] : maps_) x_->unmap_member(m.base, m.bytes);
}

Expected<int> DomainMembership::receive_fd() {
  if (socket_ < 0) return failed_precondition("this child has no socket for the domain's descriptor");
  // The parent sends the descriptor before it publishes the request.
  return node::receive_fd(socket_);
}

Expected<uint64_t> DomainMembership::attach(const uint64_t* a) {
  const uint64_t id = a[0], bytes = a[2];
  TASKRING_ASSIGN_OR_RETURN(const int fd, receive_fd());
  if (maps_.count(id) != 0) {
    close(fd);
    return Status(StatusCode::kAlreadyExists, "domain " + std::to_string(id) + " is already attached");
  }
  TASKRING_ASSIGN_OR_RETURN(char* base, x_->map_member(fd, bytes));
  Status joined = join(base, bytes, id, static_cast<int>(a[1]), a[3]);
  if (!joined.ok()) {
    x_->unmap_member(base, bytes);
    return joined;
  }
  // Every window is zeroed now: fault all of them into this process here,
  // at allocation, so the kernels' first puts into a peer's window do not
  // fault inside the step.
  prefault_for_write(base, bytes);
  maps_[id] = Mapping{base, bytes};
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(base));
}

Status DomainMembership::join(char* base, uint64_t bytes, uint64_t id, int rank, uint64_t timeout_ms) {
  auto& h = *reinterpret_cast<cm::DomainHeader*>(base);
  const cm::DomainLayout layout = cm::DomainLayout::make(h.nranks, h.window_size, h.ring_bytes);
  const std::string who = "comm domain '" + std::string(h.name) + "' rank " + std::to_string(rank);
  if (h.magic != cm::kHeaderMagic || h.id != id || rank < 0 || rank >= h.nranks || layout.total != bytes)
    return internal_error(who + ": the shared object does not match the request");
  // Zero first, publish after: the arrival below is what lets peers write.
  std::memset(base + layout.window(rank), 0, layout.window_size);
  std::memset(base + layout.sync(rank), 0, sizeof(cm::SyncBlock));
  auto* ctx = reinterpret_cast<cm::CommContext*>(base + layout.context(rank));
  cm::fill_context(ctx, base, layout, rank, timeout_ms * 1'000'000);
  // Spans nodes (L4): off-node peers through this rank's request ring. A
  // domain whose nodes all share the object has no ring and no off-node
  // rank, except on a node that refused it (aborted: no kernel runs on it).
  if (h.offnode_mask != 0 && h.ring_bytes != 0) {
    auto* ring = reinterpret_cast<cm::RemoteRing*>(base + layout.ring(rank));
    std::memset(static_cast<void*>(ring), 0, cm::RemoteRing::kDataOffset);
    ring->capacity = cm::RemoteRing::capacity_for(layout.ring_bytes);
    ctx->offnode = h.offnode_mask;
    ctx->ring = reinterpret_cast<uintptr_t>(ring);
  }
  h.arrived[rank].store(1, std::memory_order_release);
  cm::ring(h.bell);
  auto all = [&] {
    for (int r = 0; r < h.nranks; ++r)
      if (h.arrived[r].load(std::memory_order_acquire) == 0) return false;
    return true;
  };
  const Deadline deadline = Deadline::after_ms(timeout_ms);
  for (uint32_t i = 0; i < 1000 && !all(); ++i) Waiter::cpu_relax();
  while (!all()) {
    h.bell.parked.fetch_add(1, std::memory_order_seq_cst);
    const uint32_t seen = h.bell.epoch.load(std::memory_order_seq_cst);
    if (all()) {
      h.bell.parked.fetch_sub(1, std::memory_order_relaxed);
      break;
    }
    if (const uint32_t ab = h.abort.load(std::memory_order_acquire); ab != 0) {
      h.bell.parked.fetch_sub(1, std::memory_order_relaxed);
      // ab >= 2: a member on MPI rank ab - 2 failed (L4 global domain); its
      // arrivals may still have been in flight.
      const std::string why =
          ab >= kernels::comm::kAbortMismatch
              ? ": MPI rank " + std::to_string(ab - kernels::comm::kAbortMismatch) +
                    " allocated a different domain under this name and sequence (members, ranks or window size "
                    "differ; every node must allocate the same domains in the same order),"
          : ab >= 2 ? ", a member on MPI rank " + std::to_string(ab - 2) + " failed,"
                    : "";
      return aborted(who + ": the allocation was aborted" + why + " while waiting for ranks " + missing_ranks(h));
    }
    const uint64_t left = deadline.remaining_ns();
    if (left == 0) {
      h.bell.parked.fetch_sub(1, std::memory_order_relaxed);
      return deadline_exceeded(who + ": the allocation barrier passed its " + std::to_string(timeout_ms) +
                               " ms deadline; missing ranks " + missing_ranks(h));
    }
    shared_futex_wait(&h.bell.epoch, seen, left < kSliceNs ? left : kSliceNs);
    h.bell.parked.fetch_sub(1, std::memory_order_relaxed);
  }
  return Status::Ok();
}

Status DomainMembership::release(uint64_t id) {
  auto it = maps_.find(id);
  if (it == maps_.end()) return not_found("domain " + std::to_string(id) + " is not attached");
  x_->unmap_member(it->second.base, it->second.bytes);
  maps_.erase(it);
  return Status::Ok();
}

}  // namespace taskring::node
