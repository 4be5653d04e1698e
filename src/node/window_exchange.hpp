// WindowExchange: how a comm domain's windows are published to its members
// and mapped by them: the one seam between the domain logic (comm_domain.cpp,
// domain_member.cpp) and the transport.
//
// The local variant (make_memfd_window_exchange): one memfd per domain,
// created by the parent when the domain is allocated, handed to every member
// chip with its attach request (SCM_RIGHTS over the child's socket, made
// before the fork) and mapped there; the parent closes its descriptor at
// release and the kernel frees the memory with the last mapping. No name
// exists in /dev/shm, so no crash can leave a segment behind.
//
// A transport for members that share no memory with the parent (an L4 MPI
// variant) implements the same two sides: create() makes whatever the
// members need to reach each other's windows and gives the parent a view of
// the header and sync blocks (it sets the abort word); map_member() turns
// what the attach request carried into a local base address laid out as
// kernels::comm::DomainLayout.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "taskring/base/expected.hpp"
#include "taskring/kernels/comm.hpp"
#include "taskring/node/comm_domain.hpp"

namespace taskring::node {

// The parent's handle on one domain's shared object.
class DomainObject {
 public:
  virtual ~DomainObject() = default;
  // The parent's mapping of the header and the sync blocks.
  virtual kernels::comm::DomainHeader* header() = 0;
  virtual kernels::comm::SyncBlock* sync(int rank) = 0;
  // Zeroes every window and sync block as a fresh object has them, through
  // a mapping of the parent's own (the node's domain cache reuses the
  // object for a new allocation without its members, docs/comm.md). Only
  // while no member kernel can touch the domain: the run that used it has
  // passed its fence. UNAVAILABLE when the windows cannot be mapped here.
  virtual Status clear_for_reuse() = 0;
  // The descriptor that travels with rank `rank`'s attach request (-1: none).
  virtual int member_fd(int rank) = 0;
  // The word this node stores in the header's abort when its run fails: 1
  // (this node). An L4 domain object that several nodes of one host share
  // names the failing node instead (2 + its MPI rank, as a remote abort),
  // since the other nodes' members read the same word.
  virtual uint32_t abort_code() const { return 1; }

  // Global domains (L4) that the node's cache may keep after a passed run:
  // those whose every member node shares this one object (one host). Each
  // node's next allocation of the same domain then calls rejoin(use) with
  // use = 1, 2, ... (how often it was reused): true once every member node
  // did the same and cleared its own ranks' windows and sync blocks (the
  // members keep their mappings); false when another node dropped it or its
  // last run failed: this node dropped it too and allocates afresh, as the
  // others do. An error (a node missing past `timeout_ms`) leaves it too.
  virtual bool reusable_across_nodes() const { return false; }
  virtual Expected<bool> rejoin(uint32_t /*use*/, uint64_t /*timeout_ms*/) { return false; }
  // This node drops a reusable object for good (not cached, evicted,
  // flushed), so that no other node waits in rejoin() for it. Only after a
  // passed run (every member attached).
  virtual void leave() {}
};

class WindowExchange {
 public:
  virtual ~WindowExchange() = default;
  // Parent: the shared object for `layout`, its header filled in (magic,
  // name, sizes, id). UNAVAILABLE naming the domain when the OS refuses.
  virtual Expected<std::unique_ptr<DomainObject>> create(const kernels::comm::DomainLayout& layout,
                                                         const std::string& name, uint64_t id) = 0;
  // Member: maps the object received as `fd` (`bytes` long); takes
  // ownership of `fd`. The base address of the mapping.
  virtual Expected<char*> map_member(int fd, uint64_t bytes) = 0;
  virtual void unmap_member(char* base, uint64_t bytes) = 0;
};

std::unique_ptr<WindowExchange> make_memfd_window_exchange();

// Domains spanning several nodes (L4; NodeConfig::global_domains, set by
// the NetWorker; docs/l4.md). Each node keeps a shared object with the full
// DomainLayout of the domain (rings included); only its own members'
// windows and sync blocks are used there, and the transport carries what
// members address to off-node ranks (their request rings) to the node that
// owns them, marks the other nodes' members arrived once they are, and
// spreads an abort to every member node.
class GlobalDomainTransport {
 public:
  virtual ~GlobalDomainTransport() = default;
  // This node (MPI rank) and how many there are; -1 / 0 before the
  // transport is up.
  virtual int node() const = 0;
  virtual int nodes() const = 0;
  // The request ring of each rank (kernels::comm::kRemoteRingBytes), or 0
  // when every member node shares one object (one host): then no rank is
  // reached through a ring, and the members need not map and prefault
  // nranks rings for nothing. The same on every member node.
  virtual uint64_t ring_bytes(std::span<const GlobalMember> members) const = 0;
  // Creates this node's part of the domain (header filled in, with the
  // off-node mask and ring size) and starts serving it. Every member node
  // allocates the domains of one name in the same order: the n-th domain
  // called `name` on each node is the same domain. `id` is this node's
  // proposal; the object's header()->id is the domain's id (member nodes on
  // one host may share one object, named by the node that created it).
  virtual Expected<std::unique_ptr<DomainObject>> create(const kernels::comm::DomainLayout& layout,
                                                         const std::string& name, uint64_t id,
                                                         std::span<const GlobalMember> members) = 0;
  // What members map (the memfd variant: the child side is the same).
  virtual WindowExchange& member_exchange() = 0;
};

}  // namespace taskring::node
