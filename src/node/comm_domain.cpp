// Comm domains on the node: allocation (validate, create the shared object
// or take a cached one, every member attaches in parallel and meets the
// others), the abort hook, and the sweep at the run's fence into the domain
// cache. The transport is behind WindowExchange.
#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <iterator>
#include <set>
#include <utility>

#include "dag/engine.hpp"
#include "taskring/kernels/comm_remote.hpp"
#include "taskring/node/comm_domain.hpp"
#include "window_exchange.hpp"

namespace taskring::node {

namespace cm = kernels::comm;

namespace {
constexpr uint64_t kMaxWindow = 1ull << 34;
uint64_t align64(uint64_t n) { return (n + 63) / 64 * 64; }

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
}  // namespace

std::vector<int> CommDomain::chips() const {
  std::vector<int> c;
  for (const DomainMember& m : members_) c.push_back(m.chip);
  return c;
}

Expected<DomainMember> CommDomain::member(int chip) const {
  for (const DomainMember& m : members_)
    if (m.chip == chip) return m;
  std::string list;
  for (const DomainMember& m : members_) list += (list.empty() ? "" : ",") + std::to_string(m.chip);
  return not_found("chip " + std::to_string(chip) + " is not a member of comm domain '" + name_ + "' (members: chips " +
                   list + ")");
}

Expected<uint64_t> CommDomain::buffer_offset(std::string_view name) const {
  for (const auto& [n, off] : buffers_)
    if (n == name) return off;
  return not_found("comm domain '" + name_ + "' has no buffer named '" + std::string(name) + "'");
}

Expected<uint64_t> CommDomain::buffer(int chip, std::string_view name) const {
  TASKRING_ASSIGN_OR_RETURN(const DomainMember m, member(chip));
  TASKRING_ASSIGN_OR_RETURN(const uint64_t off, buffer_offset(name));
  return m.window_base + off;
}

// A swept one-node domain kept for reuse: its object, still mapped by every
// member chip (at bases[i] in chips[i]), and what an allocation must match to
// take it (the same chips in the same order, the same layout).
struct CachedDomain {
  std::shared_ptr<DomainObject> obj;
  cm::DomainLayout layout;
  uint64_t id = 0;
  std::vector<int> chips;
  std::vector<uint64_t> bases;
};

class DomainRegistry {
 public:
  static Status validate(const Engine& e, const std::string& name, std::span<const int> chips, uint64_t window_size,
                         std::span<const DomainBufferSpec> buffers) {
    if (name.empty() || name.size() >= cm::kNameBytes)
      return invalid_argument("the name must be 1.." + std::to_string(cm::kNameBytes - 1) + " bytes");
    if (chips.empty() || chips.size() > static_cast<size_t>(kMaxDomainRanks))
      return invalid_argument(std::to_string(chips.size()) + " members; a domain has 1..64");
    std::set<int> seen;
    for (int c : chips) {
      if (c < 0 || c >= e.chips())
        return out_of_range("chip " + std::to_string(c) + " is not a chip of this node [0, " + std::to_string(e.chips()) +
                            ")");
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
      used += align64(b.bytes);
    }
    if (used > window_size)
      return invalid_argument("the buffers need " + std::to_string(used) + " B (each 64-aligned), window_size is " +
                              std::to_string(window_size) + " B");
    return Status::Ok();
  }

  static Expected<std::shared_ptr<CommDomain>> allocate(Engine& e, RunState* run, const std::string& name,
                                                        std::span<const int> chips, uint64_t window_size,
                                                        std::span<const DomainBufferSpec> buffers) {
    const std::string api = "allocate_domain('" + name + "')";
    if (e.cfg_.exchange == nullptr) return unimplemented(api + ": this node has no comm transport");
    {
      std::lock_guard<std::mutex> lk(e.mu_);
      if (e.closing_) return e.closing_status_;
      if (!run->first_error.ok()) return run->first_error;
    }
    Status v = validate(e, name, chips, window_size, buffers);
    if (!v.ok()) return v.with_context(api);

    const int n = static_cast<int>(chips.size());
    const cm::DomainLayout layout = cm::DomainLayout::make(n, window_size);
    std::vector<int> ranks(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) ranks[static_cast<size_t>(r)] = r;
    if (std::shared_ptr<CachedDomain> c = take_cached(e, chips, layout)) {
      // No member is involved: the run that used the domain passed its
      // fence, so no kernel touches it, and the dispatch of this run's
      // tasks publishes the cleared windows to the members. They are only
      // told to stay awake for those tasks: waking now, they come up while
      // this thread clears the domain and submits (docs/node.md).
      e.expect_work(chips);
      reset_header(*c->obj->header(), name);
      if (Status s = c->obj->clear_for_reuse(); !s.ok()) {
        (void)release_all(e, c->chips, c->id, name);
        return s.with_context(api);
      }
      return publish(e, run, name, c->obj, layout, c->id, chips, ranks, c->bases, buffers, true);
    }
    // The members attach (attach_all); one still running a task of this
    // run could be waiting for one already parked at their barrier.
    if (Status s = e.drain_submitted(run, api); !s.ok()) return s;
    const uint64_t id = e.next_domain_id_.fetch_add(1);
    auto created = e.cfg_.exchange->create(layout, name, id);
    if (!created.ok()) return created.status().with_context(api);
    return attach_all(e, run, api, name, std::shared_ptr<DomainObject>(std::move(*created)), layout, id, chips, ranks,
                      buffers, Join::kAttach);
  }

  // A domain spanning nodes: this node's members attach to its part; the
  // transport makes the other nodes' members arrive and carries requests.
  static Expected<std::shared_ptr<CommDomain>> allocate_global(Engine& e, RunState* run, const std::string& name,
                                                               std::span<const GlobalMember> members,
                                                               uint64_t window_size,
                                                               std::span<const DomainBufferSpec> buffers) {
    const std::string api = "allocate_global_domain('" + name + "')";
    GlobalDomainTransport* t = e.cfg_.global_domains;
    if (t == nullptr || t->nodes() <= 0)
      return unimplemented(api + ": this node is not part of an L4 worker (NetWorker); use allocate_domain");
    {
      std::lock_guard<std::mutex> lk(e.mu_);
      if (e.closing_) return e.closing_status_;
      if (!run->first_error.ok()) return run->first_error;
    }
    if (members.empty() || members.size() > static_cast<size_t>(kMaxDomainRanks))
      return invalid_argument(std::to_string(members.size()) + " members; a domain has 1..64").with_context(api);
    std::set<std::pair<int, int>> seen;
    std::vector<int> chips, ranks;
    for (size_t i = 0; i < members.size(); ++i) {
      const GlobalMember& m = members[i];
      const std::string who = "member " + std::to_string(i) + " (node " + std::to_string(m.node) + ", chip " +
                              std::to_string(m.chip) + ")";
      if (m.node < 0 || m.node >= t->nodes())
        return out_of_range(who + ": node not in [0, " + std::to_string(t->nodes()) + ")").with_context(api);
      if (m.chip < 0) return out_of_range(who + ": negative chip").with_context(api);
      if (!seen.insert({m.node, m.chip}).second) return invalid_argument(who + " is listed twice").with_context(api);
      if (m.node == t->node()) {
        chips.push_back(m.chip);
        ranks.push_back(static_cast<int>(i));
      }
    }
    if (chips.empty())
      return invalid_argument("no member is on this node (" + std::to_string(t->node()) +
                              "); only member nodes allocate a global domain")
          .with_context(api);
    Status v = validate(e, name, chips, window_size, buffers);
    if (!v.ok()) return v.with_context(api);
    const cm::DomainLayout layout =
        cm::DomainLayout::make(static_cast<int>(members.size()), window_size, cm::kRemoteRingBytes);
    if (Status s = e.drain_submitted(run, api); !s.ok()) return s;  // as in allocate()
    const uint64_t id = e.next_domain_id_.fetch_add(1);
    auto created = t->create(layout, name, id, members);
    if (!created.ok()) return created.status().with_context(api);
    return attach_all(e, run, api, name, std::shared_ptr<DomainObject>(std::move(*created)), layout, id, chips, ranks,
                      buffers, Join::kAttachUncached);
  }

  // Ends every wait in the domain with an error (the run failed).
  static std::function<void()> abort_hook(std::shared_ptr<DomainObject> obj, int nranks) {
    return [obj = std::move(obj), nranks] {
      obj->header()->abort.store(1, std::memory_order_release);
      cm::ring(obj->header()->bell);
      for (int r = 0; r < nranks; ++r) cm::ring(obj->sync(r)->bell);
    };
  }

  // Whether the fence may keep a passed run's domain for reuse: a one-node
  // domain yes, a global one (its parts on other nodes) no.
  enum class Join { kAttach, kAttachUncached };

  // Every member chip (domain rank ranks[i] on chips[i]) attaches to `obj`.
  static Expected<std::shared_ptr<CommDomain>> attach_all(Engine& e, RunState* run, const std::string& api,
                                                          const std::string& name, std::shared_ptr<DomainObject> obj,
                                                          const cm::DomainLayout& layout, uint64_t id,
                                                          std::span<const int> chips, std::span<const int> ranks,
                                                          std::span<const DomainBufferSpec> buffers, Join join) {
    const int n = static_cast<int>(chips.size());
    const int nranks = layout.nranks;
    // Every member attaches at once: they meet at a barrier inside.
    std::vector<bool> posted(static_cast<size_t>(n), false);
    std::vector<Expected<uint64_t>> got(static_cast<size_t>(n), Expected<uint64_t>(uint64_t{0}));
    const std::function<void()> abort_domain = abort_hook(obj, nranks);
    for (int r = 0; r < n; ++r) {
      ControlRequest req;
      req.op = ControlOp::kAttachDomain;
      req.args[0] = id;
      req.args[1] = static_cast<uint64_t>(ranks[r]);
      req.args[2] = layout.total;
      req.args[3] = e.cfg_.comm_timeout_ms;
      req.fd = obj->member_fd(ranks[r]);
      Status p = e.chip_endpoint(chips[r]).control_post(req);
      if (!p.ok()) {
        got[r] = p;
        abort_domain();  // the others must not wait for this one
      } else {
        posted[r] = true;
      }
    }
    const Deadline deadline = Deadline::after_ms(e.cfg_.comm_timeout_ms + e.cfg_.control_timeout_ms);
    for (int r = 0; r < n; ++r)
      if (posted[r]) got[r] = e.chip_endpoint(chips[r]).control_wait(deadline);
    // The most telling error: a member's own failure (a deadline names the
    // missing ranks) before the aborts it caused.
    Status err;
    for (int r = 0; r < n; ++r) {
      if (got[r].ok()) continue;
      if (err.ok() || (err.code() == StatusCode::kAborted && got[r].status().code() != StatusCode::kAborted))
        err = got[r].status().with_context("rank " + std::to_string(ranks[r]) + " (chip " + std::to_string(chips[r]) + ")");
    }
    if (!err.ok()) {
      for (int r = 0; r < n; ++r)
        if (got[r].ok()) (void)release_member(e, chips[r], id);
      return err.with_context(api);
    }
    std::vector<uint64_t> bases;
    for (int r = 0; r < n; ++r) bases.push_back(*got[r]);
    return publish(e, run, name, std::move(obj), layout, id, chips, ranks, bases, buffers, join == Join::kAttach);
  }

  // The domain as its members map it (rank ranks[i] on chips[i] at
  // bases[i]), counted live until the run's fence, which releases it or,
  // when `cacheable` and the run passed, keeps it for reuse.
  static std::shared_ptr<CommDomain> publish(Engine& e, RunState* run, const std::string& name,
                                             std::shared_ptr<DomainObject> obj, const cm::DomainLayout& layout,
                                             uint64_t id, std::span<const int> chips, std::span<const int> ranks,
                                             std::span<const uint64_t> bases,
                                             std::span<const DomainBufferSpec> buffers, bool cacheable) {
    const int n = static_cast<int>(chips.size());
    const int nranks = layout.nranks;
    const std::function<void()> abort_domain = abort_hook(obj, nranks);
    auto d = std::make_shared<CommDomain>();
    d->name_ = name;
    d->window_size_ = layout.window_size;
    d->nranks_ = nranks;
    for (int r = 0; r < n; ++r) {
      DomainMember m;
      m.chip = chips[r];
      m.rank = ranks[r];
      m.size = nranks;
      m.device_ctx = bases[r] + layout.context(ranks[r]);
      m.window_base = bases[r] + layout.window(ranks[r]);
      m.window_size = layout.window_size;
      d->members_.push_back(m);
    }
    uint64_t off = 0;
    for (const DomainBufferSpec& b : buffers) {
      d->buffers_.emplace_back(b.name, off);
      off += align64(b.bytes);
    }
    e.live_domains_.fetch_add(1, std::memory_order_acq_rel);
    std::vector<int> members(chips.begin(), chips.end());
    std::vector<uint64_t> member_bases(bases.begin(), bases.end());
    Engine* eng = &e;
    std::lock_guard<std::mutex> lk(e.mu_);
    run->on_abort.push_back(abort_domain);
    std::weak_ptr<CommDomain> handle = d;
    run->at_fence.push_back([eng, run, obj, layout, members, member_bases, id, name, cacheable,
                             handle]() -> Status {
      eng->live_domains_.fetch_sub(1, std::memory_order_acq_rel);
      if (auto h = handle.lock()) h->swept_.store(true, std::memory_order_release);
      // A closing worker stops its children next; a member may still be
      // inside a kernel and could not serve the request before its
      // deadline. Their mappings end with them; the parent's goes here.
      if (eng->closing_) return Status::Ok();
      // A failed run's members may be gone or stuck: keep nothing of it (the
      // engine flushes the cache after the fence, flush_domain_cache).
      if (!run->first_error.ok() || !cacheable || eng->cfg_.domain_cache <= 0) return release_all(*eng, members, id, name);
      auto c = std::make_shared<CachedDomain>(CachedDomain{obj, layout, id, members, member_bases});
      std::shared_ptr<CachedDomain> evicted;
      {
        std::lock_guard<std::mutex> lk(eng->domain_cache_mu_);
        eng->domain_cache_.push_back(std::move(c));
        if (static_cast<int>(eng->domain_cache_.size()) > eng->cfg_.domain_cache) {
          evicted = std::move(eng->domain_cache_.front());
          eng->domain_cache_.pop_front();
        }
      }
      return evicted ? release_all(*eng, evicted->chips, evicted->id, evicted->obj->header()->name) : Status::Ok();
    });
    if (!run->first_error.ok()) abort_domain();  // the run failed while we allocated
    return d;
  }

  // The most recent cached domain of exactly these chips and this layout,
  // taken out of the cache; nullptr when there is none.
  static std::shared_ptr<CachedDomain> take_cached(Engine& e, std::span<const int> chips,
                                                   const cm::DomainLayout& layout) {
    std::lock_guard<std::mutex> lk(e.domain_cache_mu_);
    for (auto it = e.domain_cache_.rbegin(); it != e.domain_cache_.rend(); ++it) {
      const CachedDomain& c = **it;
      // The layout follows from the rank count and the window size.
      if (c.layout.window_size != layout.window_size ||
          !std::equal(chips.begin(), chips.end(), c.chips.begin(), c.chips.end()))
        continue;
      std::shared_ptr<CachedDomain> taken = std::move(*it);
      e.domain_cache_.erase(std::next(it).base());
      return taken;
    }
    return nullptr;
  }

  // Every member unmaps domain `id`; the first failure, naming the domain.
  static Status release_all(Engine& e, std::span<const int> chips, uint64_t id, const std::string& name) {
    Status first;
    for (int c : chips) {
      Status s = release_member(e, c, id);
      if (first.ok() && !s.ok()) first = s.with_context("comm domain '" + name + "'");
    }
    return first;
  }

  static Status release_member(Engine& e, int chip, uint64_t id) {
    ControlRequest req;
    req.op = ControlOp::kReleaseDomain;
    req.args[0] = id;
    return e.chip_endpoint(chip).control(req, Deadline::after_ms(e.cfg_.control_timeout_ms)).status();
  }
};

Status Engine::flush_domain_cache() {
  std::deque<std::shared_ptr<CachedDomain>> all;
  {
    std::lock_guard<std::mutex> lk(domain_cache_mu_);
    all.swap(domain_cache_);
  }
  Status first;
  for (const auto& c : all) {
    Status s = DomainRegistry::release_all(*this, c->chips, c->id, c->obj->header()->name);
    if (first.ok()) first = s;
  }
  return first;
}

int Engine::cached_domains() const {
  std::lock_guard<std::mutex> lk(domain_cache_mu_);
  return static_cast<int>(domain_cache_.size());
}

Expected<std::shared_ptr<CommDomain>> Engine::allocate_domain(RunState* run, const std::string& name,
                                                              std::span<const int> chips, uint64_t window_size,
                                                              std::span<const DomainBufferSpec> buffers) {
  return DomainRegistry::allocate(*this, run, name, chips, window_size, buffers);
}

Expected<std::shared_ptr<CommDomain>> Engine::allocate_global_domain(RunState* run, const std::string& name,
                                                                     std::span<const GlobalMember> members,
                                                                     uint64_t window_size,
                                                                     std::span<const DomainBufferSpec> buffers) {
  return DomainRegistry::allocate_global(*this, run, name, members, window_size, buffers);
}

}  // namespace taskring::node
