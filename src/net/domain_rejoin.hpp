// Reusing a global comm domain whose member nodes all share one object (the
// nodes of one host, domain_service.hpp), so that a later allocation of the
// same domain costs no attach: every member chip keeps its mapping, as the
// node's cache does for one-node domains (docs/l4.md, issue 36).
//
// The member nodes meet in the shared header's arrived[] words, which the
// members' attach set to 1 (allocation barrier passed). For the u-th reuse
// (u = 1, 2, ...; every node counts alike, since a node only reuses what it
// held through every earlier use):
//   1. each node stores 2u in its ranks' words ("my run of the last use
//      passed its fence: no member of mine touches the domain any more")
//      and waits until every rank's word is >= 2u;
//   2. then it zeroes its own ranks' windows and sync blocks (the node that
//      created the object also resets the header's kernel barrier), stores
//      2u + 1 ("cleared") and waits until every word is >= 2u + 1.
// Only then may its chips run: no peer can still read a window of the last
// use when it is cleared, and no put of this use can land before it is.
// A node that drops the object for good (evicted, not cached, flushed)
// stores kLeft in its ranks' words; a node waiting in step 1 that sees it,
// or an abort word set by a failed run, leaves too and allocates afresh,
// as the others then do: every node takes the same path.
#pragma once

#include <cstdint>
#include <span>

#include "taskring/base/expected.hpp"
#include "taskring/kernels/comm.hpp"

namespace taskring::net {

// A node's view of the shared object: the whole object mapped at `base`,
// this node's domain ranks, and whether this node created it (it alone
// writes the header).
struct RejoinView {
  char* base = nullptr;
  kernels::comm::DomainLayout layout;
  std::span<const int> local;
  bool owns_header = false;
};

// The u-th reuse (`use` >= 1) as above. true: every node reuses it, this
// node's ranks are cleared; false: some node left or the last use failed,
// this node left too (allocate afresh). DEADLINE_EXCEEDED naming the ranks
// that did not come within `timeout_ms`; ABORTED when a node left after
// everyone agreed to reuse (step 2). This node has left after any error.
Expected<bool> rejoin_shared(const RejoinView& v, uint32_t use, uint64_t timeout_ms);

// This node drops the object: a later or waiting rejoin elsewhere falls
// back. Only on an object every member attached to (a passed use): the
// attach barrier counts any non-zero word as arrived.
void leave_shared(const RejoinView& v);

}  // namespace taskring::net
