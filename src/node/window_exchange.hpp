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
#include <string>

#include "taskring/base/expected.hpp"
#include "taskring/kernels/comm.hpp"

namespace taskring::node {

// The parent's handle on one domain's shared object.
class DomainObject {
 public:
  virtual ~DomainObject() = default;
  // The parent's mapping of the header and the sync blocks.
  virtual kernels::comm::DomainHeader* header() = 0;
  virtual kernels::comm::SyncBlock* sync(int rank) = 0;
  // The descriptor that travels with rank `rank`'s attach request (-1: none).
  virtual int member_fd(int rank) = 0;
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

}  // namespace taskring::node
