// DomainRegistry, step 1: allocate. Validates a request, then takes a cached
// domain of the same shape (no member involved) or creates the shared object
// for attach_all (domain_attach.cpp).
#include <algorithm>
#include <cstring>
#include <iterator>
#include <set>
#include <utility>

#include "domain_registry.hpp"
#include "taskring/base/align.hpp"
#include "taskring/kernels/comm_remote.hpp"

namespace taskring::node {

namespace cm = kernels::comm;

namespace {
constexpr uint64_t kMaxWindow = 1ull << 34;

// What a reused domain must not carry over in its header: its kernel
// barrier counters, an abort, its name. The arrivals stay: every member
// still maps the object, as the allocation barrier found them. The windows
// and sync blocks are zeroed by DomainObject::clear_for_reuse.
void reset_header(cm::DomainHeader& h, const std::string& name) {
  h.abort.store(0, std::memory_order_relaxed);
  h.barrier_arrivals.store(0, std::memory_order_relaxed);
  h.barrier_done.store(0, std::memory_order_relaxed);
  std::memset(h.name, 0, cm::kNameBytes);
  std::strncpy(h.name, name.c_str(), cm::kNameBytes - 1);
}

std::vector<int> dense_ranks(int n) {
  std::vector<int> ranks(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) ranks[static_cast<size_t>(r)] = r;
  return ranks;
}
}  // namespace

Status DomainRegistry::validate(const std::string& name, std::span<const int> chips, uint64_t window_size,
                                std::span<const DomainBufferSpec> buffers) const {
  if (name.empty() || name.size() >= cm::kNameBytes)
    return invalid_argument("the name must be 1.." + std::to_string(cm::kNameBytes - 1) + " bytes");
  if (chips.empty() || chips.size() > static_cast<size_t>(kMaxDomainRanks))
    return invalid_argument(std::to_string(chips.size()) + " members; a domain has 1..64");
  std::set<int> seen;
  for (int c : chips) {
    if (c < 0 || c >= e_.chips())
      return out_of_range("chip " + std::to_string(c) + " is not a chip of this node [0, " +
                          std::to_string(e_.chips()) + ")");
    if (!seen.insert(c).second) return invalid_argument("chip " + std::to_string(c) + " is listed twice");
  }
  if (window_size == 0 || window_size > kMaxWindow)
    return invalid_argument("window_size " + std::to_string(window_size) + " not in [1, 2^34]");
  uint64_t used = 0;
  std::set<std::string> names;
  for (const DomainBufferSpec& b : buffers) {
    if (b.name.empty()) return invalid_argument("a buffer has an empty name");
    if (!names.insert(b.name).second) return invalid_argument("buffer '" + b.name + "' is listed twice");
    if (b.bytes == 0) return invalid_argument("buffer '" + b.name + "' has 0 bytes");
    if (b.bytes > kMaxWindow) return invalid_argument("buffer '" + b.name + "' is larger than any window");
    used += align_up(b.bytes, 64);
  }
  if (used > window_size)
    return invalid_argument("the buffers need " + std::to_string(used) + " B (each 64-aligned), window_size is " +
                            std::to_string(window_size) + " B");
  return Status::Ok();
}

Expected<std::shared_ptr<CommDomain>> DomainRegistry::allocate(RunState* run, const std::string& name,
                                                               std::span<const int> chips, uint64_t window_size,
                                                               std::span<const DomainBufferSpec> buffers) {
  const std::string api = "allocate_domain('" + name + "')";
  if (cfg_.exchange == nullptr) return unimplemented(api + ": this node has no comm transport");
  TASKRING_RETURN_IF_ERROR(e_.run_open(run));
  Status v = validate(name, chips, window_size, buffers);
  if (!v.ok()) return v.with_context(api);

  const int n = static_cast<int>(chips.size());
  const cm::DomainLayout layout = cm::DomainLayout::make(n, window_size);
  if (std::shared_ptr<Cached> c = take_cached(chips, layout))
    return reuse(run, api, std::move(c), name, dense_ranks(n), buffers);
  // The members attach (attach_all); one still running a task of this
  // run could be waiting for one already parked at their barrier.
  if (Status s = e_.drain_submitted(run, api); !s.ok()) return s;
  const uint64_t id = next_id_.fetch_add(1);
  auto created = cfg_.exchange->create(layout, name, id);
  if (!created.ok()) return created.status().with_context(api);
  Placed p{name, std::shared_ptr<DomainObject>(std::move(*created)), layout,
           id,   std::vector<int>(chips.begin(), chips.end()),       dense_ranks(n),
           {},   {},                                                  0};
  return attach_all(run, api, std::move(p), buffers, Join::kAttach);
}

// No member is involved: the run that used the domain passed its fence, so
// no kernel touches it, and the dispatch of this run's tasks publishes the
// cleared windows to the members. They are only told to stay awake for
// those tasks: waking now, they come up while this thread clears the domain
// and submits (docs/node.md).
Expected<std::shared_ptr<CommDomain>> DomainRegistry::reuse(RunState* run, const std::string& api,
                                                            std::shared_ptr<Cached> c, const std::string& name,
                                                            std::span<const int> ranks,
                                                            std::span<const DomainBufferSpec> buffers) {
  e_.expect_work(c->chips);
  reset_header(*c->obj->header(), name);
  if (Status s = c->obj->clear_for_reuse(); !s.ok()) {
    (void)release_all(c->chips, c->id, name);
    return s.with_context(api);
  }
  Placed p = *c;
  p.name = name;
  p.ranks.assign(ranks.begin(), ranks.end());
  return publish(run, std::move(p), buffers, true);
}

Status DomainRegistry::local_members(std::span<const GlobalMember> members, std::vector<int>* chips,
                                     std::vector<int>* ranks) const {
  GlobalDomainTransport* t = cfg_.global;
  if (members.empty() || members.size() > static_cast<size_t>(kMaxDomainRanks))
    return invalid_argument(std::to_string(members.size()) + " members; a domain has 1..64");
  std::set<std::pair<int, int>> seen;
  for (size_t i = 0; i < members.size(); ++i) {
    const GlobalMember& m = members[i];
    const std::string who =
        "member " + std::to_string(i) + " (node " + std::to_string(m.node) + ", chip " + std::to_string(m.chip) + ")";
    if (m.node < 0 || m.node >= t->nodes())
      return out_of_range(who + ": node not in [0, " + std::to_string(t->nodes()) + ")");
    if (m.chip < 0) return out_of_range(who + ": negative chip");
    if (!seen.insert({m.node, m.chip}).second) return invalid_argument(who + " is listed twice");
    if (m.node == t->node()) {
      chips->push_back(m.chip);
      ranks->push_back(static_cast<int>(i));
    }
  }
  if (chips->empty())
    return invalid_argument("no member is on this node (" + std::to_string(t->node()) +
                            "); only member nodes allocate a global domain");
  return Status::Ok();
}

// A domain spanning nodes: this node's members attach to its part; the
// transport makes the other nodes' members arrive and carries requests.
Expected<std::shared_ptr<CommDomain>> DomainRegistry::allocate_global(RunState* run, const std::string& name,
                                                                      std::span<const GlobalMember> members,
                                                                      uint64_t window_size,
                                                                      std::span<const DomainBufferSpec> buffers) {
  const std::string api = "allocate_global_domain('" + name + "')";
  GlobalDomainTransport* t = cfg_.global;
  if (t == nullptr || t->nodes() <= 0)
    return unimplemented(api + ": this node is not part of an L4 worker (NetWorker); use allocate_domain");
  TASKRING_RETURN_IF_ERROR(e_.run_open(run));
  std::vector<int> chips, ranks;
  if (Status s = local_members(members, &chips, &ranks); !s.ok()) return s.with_context(api);
  Status v = validate(name, chips, window_size, buffers);
  if (!v.ok()) return v.with_context(api);
  const cm::DomainLayout layout =
      cm::DomainLayout::make(static_cast<int>(members.size()), window_size, t->ring_bytes(members));
  if (Status s = e_.drain_submitted(run, api); !s.ok()) return s;  // as in allocate()
  if (std::shared_ptr<Cached> c = take_cached_global(name, members, layout)) {
    auto reused = reuse_global(run, api, std::move(c), buffers);
    if (!reused.ok() || *reused != nullptr) return reused;
    // A member node dropped it: every node allocates afresh, as here.
  }
  auto created = t->create(layout, name, next_id_.fetch_add(1), members);
  if (!created.ok()) return created.status().with_context(api);
  // The header's id, which the members check: an object that several nodes
  // of one host share carries the id its creator gave it.
  const uint64_t id = (*created)->header()->id;
  const Join join = (*created)->reusable_across_nodes() ? Join::kAttach : Join::kAttachUncached;
  Placed p{name,
           std::shared_ptr<DomainObject>(std::move(*created)),
           layout,
           id,
           std::move(chips),
           std::move(ranks),
           {},
           std::vector<GlobalMember>(members.begin(), members.end()),
           0};
  return attach_all(run, api, std::move(p), buffers, join);
}

// Every member node meets in the shared header (DomainObject::rejoin); its
// chips keep their mappings and are told to stay awake for this run's tasks
// only once the nodes agreed (before, they would take the CPUs the other
// nodes' orchestrators need to get there).
Expected<std::shared_ptr<CommDomain>> DomainRegistry::reuse_global(RunState* run, const std::string& api,
                                                                   std::shared_ptr<Cached> c,
                                                                   std::span<const DomainBufferSpec> buffers) {
  const uint32_t use = c->uses + 1;
  Expected<bool> joined = c->obj->rejoin(use, cfg_.comm_timeout_ms);
  if (!joined.ok() || !*joined) {
    // rejoin() left the object: the members only unmap it.
    Status s = release_all(c->chips, c->id, c->name);
    if (!joined.ok()) return joined.status().with_context(api);
    if (!s.ok()) return s.with_context(api);
    return std::shared_ptr<CommDomain>();
  }
  e_.expect_work(c->chips);
  Placed p = *c;
  p.uses = use;
  return publish(run, std::move(p), buffers, true);
}

// The most recent cached domain of exactly these chips and this layout,
// taken out of the cache; nullptr when there is none.
std::shared_ptr<DomainRegistry::Cached> DomainRegistry::take_cached(std::span<const int> chips,
                                                                    const cm::DomainLayout& layout) {
  std::lock_guard<std::mutex> lk(cache_mu_);
  for (auto it = cache_.rbegin(); it != cache_.rend(); ++it) {
    const Cached& c = **it;
    // The layout follows from the rank count and the window size.
    if (!c.members.empty() || c.layout.window_size != layout.window_size ||
        !std::equal(chips.begin(), chips.end(), c.chips.begin(), c.chips.end()))
      continue;
    std::shared_ptr<Cached> taken = std::move(*it);
    cache_.erase(std::next(it).base());
    return taken;
  }
  return nullptr;
}

std::shared_ptr<DomainRegistry::Cached> DomainRegistry::take_cached_global(const std::string& name,
                                                                           std::span<const GlobalMember> members,
                                                                           const cm::DomainLayout& layout) {
  auto same = [](const GlobalMember& a, const GlobalMember& b) { return a.node == b.node && a.chip == b.chip; };
  std::lock_guard<std::mutex> lk(cache_mu_);
  for (auto it = cache_.rbegin(); it != cache_.rend(); ++it) {
    const Cached& c = **it;
    if (c.members.empty() || c.name != name || c.layout.window_size != layout.window_size ||
        c.layout.ring_bytes != layout.ring_bytes ||
        !std::equal(members.begin(), members.end(), c.members.begin(), c.members.end(), same))
      continue;
    std::shared_ptr<Cached> taken = std::move(*it);
    cache_.erase(std::next(it).base());
    return taken;
  }
  return nullptr;
}

int DomainRegistry::cached() const {
  std::lock_guard<std::mutex> lk(cache_mu_);
  return static_cast<int>(cache_.size());
}

}  // namespace taskring::node
