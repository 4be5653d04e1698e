// DomainMembership: a chip child's side of its comm domains.
//
// attach() serves kAttachDomain: it takes the domain's descriptor from the
// child's socket, maps the object (WindowExchange), zeroes this rank's window
// and sync block, fills this rank's CommContext, then arrives at the
// allocation barrier and waits (spin-then-park, with the request's deadline)
// until every member arrived. Zeroing comes strictly before the arrival, so
// no peer can write into the window (a signal, a token row) before it is
// clean: the barrier is what publishes the windows. A domain the node's
// cache reuses (docs/comm.md) stays mapped and involves no member: the
// parent clears it. release() unmaps.
#pragma once

#include <cstdint>
#include <map>

#include "taskring/base/expected.hpp"
#include "window_exchange.hpp"

namespace taskring::node {

class DomainMembership {
 public:
  DomainMembership(WindowExchange* exchange, int socket) : x_(exchange), socket_(socket) {}
  ~DomainMembership();
  DomainMembership(const DomainMembership&) = delete;
  DomainMembership& operator=(const DomainMembership&) = delete;

  // args: [0] domain id, [1] rank, [2] object bytes, [3] timeout ms (the
  // barrier's and every kernel wait's). The base address of the mapping.
  Expected<uint64_t> attach(const uint64_t* args);
  // Unmaps domain `id`; NOT_FOUND when it is not attached.
  Status release(uint64_t id);
  size_t attached() const { return maps_.size(); }

 private:
  struct Mapping {
    char* base;
    uint64_t bytes;
  };
  Expected<int> receive_fd();
  // Checks the mapping at `base` (`bytes`) is domain `id`, zeroes rank
  // `rank`'s window and sync block, fills its context, arrives and waits for
  // every member (see the class comment).
  Status join(char* base, uint64_t bytes, uint64_t id, int rank, uint64_t timeout_ms);
  WindowExchange* x_;
  int socket_;
  std::map<uint64_t, Mapping> maps_;
};

}  // namespace taskring::node
