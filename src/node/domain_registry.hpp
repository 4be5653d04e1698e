// DomainRegistry: the node's comm domains (NodeWorker owns it; the engine
// does not). Three steps, one file each:
//   allocate (domain_allocate.cpp): validate a request, take a cached
//     domain of the same shape or create the shared object;
//   attach (domain_attach.cpp): every member chip maps the object at once
//     (they meet at a barrier inside), or unmaps it (release);
//   publish (domain_publish.cpp): the CommDomain handle, and the run hooks
//     (Engine::add_run_hooks) that abort the domain when the run fails and,
//     at the run's fence, release it or keep it in the cache for reuse.
// The cache: swept domains of passed runs, still mapped by their members,
// oldest first, at most DomainRegistryConfig::cache: one-node domains, and
// global ones whose member nodes all share one object (one host; their
// reuse is a handshake between the nodes, DomainObject::rejoin). Its own
// mutex: the fence fills it under the engine's lock, an orchestration takes
// from it without.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "dag/engine.hpp"
#include "taskring/kernels/comm.hpp"
#include "taskring/node/comm_domain.hpp"
#include "window_exchange.hpp"

namespace taskring::node {

struct DomainRegistryConfig {
  WindowExchange* exchange = nullptr;       // one-node domains; nullptr: none (UNIMPLEMENTED)
  GlobalDomainTransport* global = nullptr;  // domains spanning nodes (L4); nullptr: none
  uint64_t comm_timeout_ms = 30000;         // a member's wait at the attach barrier
  int cache = 4;                            // NodeConfig::domain_cache
};

class DomainRegistry {
 public:
  // `engine` gives the member chips' endpoints and the run hooks; it must
  // outlive every run this registry allocates in.
  DomainRegistry(Engine& engine, DomainRegistryConfig cfg) : e_(engine), cfg_(cfg) {}
  DomainRegistry(const DomainRegistry&) = delete;
  DomainRegistry& operator=(const DomainRegistry&) = delete;

  // Orchestrator::allocate_domain / allocate_global_domain (their contracts
  // are in orchestrator.hpp), for `run`.
  Expected<std::shared_ptr<CommDomain>> allocate(RunState* run, const std::string& name, std::span<const int> chips,
                                                 uint64_t window_size, std::span<const DomainBufferSpec> buffers);
  Expected<std::shared_ptr<CommDomain>> allocate_global(RunState* run, const std::string& name,
                                                        std::span<const GlobalMember> members, uint64_t window_size,
                                                        std::span<const DomainBufferSpec> buffers);

  // Domains allocated and not yet swept by their run's fence.
  int live() const { return live_.load(std::memory_order_acquire); }
  // Swept domains kept mapped for a later allocation of the same shape.
  int cached() const;
  // Every member unmaps every cached domain; the first failure.
  Status flush_cache();
  // For EngineConfig::at_every_fence: after a failed run (not while the
  // engine closes) the cache goes, since its chips may be gone or stuck.
  Status at_every_fence(const RunFence& fence);

 private:
  // What publish() records of a domain (rank ranks[i] on chips[i], mapped
  // at bases[i]); for a global domain also its members and how often its
  // object was reused (DomainObject::rejoin).
  struct Placed {
    std::string name;
    std::shared_ptr<DomainObject> obj;
    kernels::comm::DomainLayout layout;
    uint64_t id = 0;
    std::vector<int> chips, ranks;
    std::vector<uint64_t> bases;
    std::vector<GlobalMember> members;  // empty: a one-node domain
    uint32_t uses = 0;
  };
  // A swept domain kept for reuse: its object, still mapped by every member
  // chip, and what an allocation must match to take it. A one-node domain:
  // the same chips in the same order and the same layout (any name). A
  // global one: the same name, members and window size.
  using Cached = Placed;
  // Whether the fence may keep a passed run's domain for reuse: a one-node
  // domain yes, a global one only when reusable_across_nodes().
  enum class Join { kAttach, kAttachUncached };

  // ---- allocate (domain_allocate.cpp) ----
  Status validate(const std::string& name, std::span<const int> chips, uint64_t window_size,
                  std::span<const DomainBufferSpec> buffers) const;
  // The global members of this node: their chips, and their domain ranks.
  Status local_members(std::span<const GlobalMember> members, std::vector<int>* chips, std::vector<int>* ranks) const;
  Expected<std::shared_ptr<CommDomain>> reuse(RunState* run, const std::string& api, std::shared_ptr<Cached> c,
                                              const std::string& name, std::span<const int> ranks,
                                              std::span<const DomainBufferSpec> buffers);
  std::shared_ptr<Cached> take_cached(std::span<const int> chips, const kernels::comm::DomainLayout& layout);
  std::shared_ptr<Cached> take_cached_global(const std::string& name, std::span<const GlobalMember> members,
                                             const kernels::comm::DomainLayout& layout);
  // The cached global domain reused (every member node agreed), nullptr
  // when a node dropped it (then every node allocates afresh), or an error.
  Expected<std::shared_ptr<CommDomain>> reuse_global(RunState* run, const std::string& api, std::shared_ptr<Cached> c,
                                                     std::span<const DomainBufferSpec> buffers);

  // ---- attach (domain_attach.cpp) ----
  Expected<std::shared_ptr<CommDomain>> attach_all(RunState* run, const std::string& api, Placed p,
                                                   std::span<const DomainBufferSpec> buffers, Join join);
  Status release_all(std::span<const int> chips, uint64_t id, const std::string& name);
  Status release_member(int chip, uint64_t id);
  // Drops a domain this node kept: every member unmaps it; a global one is
  // left first, so that no other node waits to reuse it.
  Status drop(const Cached& c);

  // ---- publish (domain_publish.cpp) ----
  std::shared_ptr<CommDomain> publish(RunState* run, Placed p, std::span<const DomainBufferSpec> buffers,
                                      bool cacheable);
  // The fence of a published domain: release it, or keep it in the cache.
  Status sweep(const RunFence& fence, const Placed& p, bool cacheable);

  Engine& e_;
  const DomainRegistryConfig cfg_;
  std::atomic<int> live_{0};
  std::atomic<uint64_t> next_id_{1};
  mutable std::mutex cache_mu_;
  std::deque<std::shared_ptr<Cached>> cache_;
};

// Ends every wait in a domain with an error (its run failed).
std::function<void()> domain_abort_hook(std::shared_ptr<DomainObject> obj, int nranks);

}  // namespace taskring::node
