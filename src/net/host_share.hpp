// Opening the comm domain object that another node (MPI rank) of this host
// created, so that member nodes on one host share one object: their members
// then reach each other with plain stores, as on one node, and only ranks
// on other hosts go through the request rings and the progress threads
// (domain_service.hpp). The creator names the object by its process id and
// descriptor (DOMAIN_SHARE); the opener reopens it through
// /proc/<pid>/fd/<fd> (same user, no ptrace needed) and checks that what it
// got is that domain (size, magic, id, ranks, window size): a descriptor
// number reused after the creator dropped the domain is refused, never used.
#pragma once

#include <memory>
#include <string>

#include "node/window_exchange.hpp"
#include "taskring/base/expected.hpp"
#include "taskring/kernels/comm.hpp"

namespace taskring::net {

// The object `fd` of process `pid`, which must be the domain `name` of
// `layout` whose header carries `id`. The parent's view (header and sync
// blocks) is mapped; member_fd() is the reopened descriptor; the object
// cannot be cleared for reuse. UNAVAILABLE naming the domain and the
// process when it cannot be opened or is not that domain.
Expected<std::unique_ptr<node::DomainObject>> open_host_shared(int pid, int fd,
                                                               const kernels::comm::DomainLayout& layout,
                                                               const std::string& name, uint64_t id);

}  // namespace taskring::net
