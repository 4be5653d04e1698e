// Comm domains on the node: allocation (validate, create the shared object,
// every member attaches in parallel and meets the others), the abort hook
// and the sweep at the run's fence. The transport is behind WindowExchange.
#include <algorithm>
#include <set>

#include "engine.hpp"
#include "taskring/kernels/comm_remote.hpp"
#include "taskring/node/comm_domain.hpp"
#include "window_exchange.hpp"

namespace taskring::node {

namespace cm = kernels::comm;

namespace {
constexpr uint64_t kMaxWindow = 1ull << 34;
uint64_t align64(uint64_t n) { return (n + 63) / 64 * 64; }
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
    const uint64_t id = e.next_domain_id_.fetch_add(1);
    auto created = e.cfg_.exchange->create(layout, name, id);
    if (!created.ok()) return created.status().with_context(api);
    std::vector<int> ranks(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) ranks[static_cast<size_t>(r)] = r;
    return attach_all(e, run, api, name, std::shared_ptr<DomainObject>(std::move(*created)), layout, id, chips, ranks,
                      buffers);
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
    const uint64_t id = e.next_domain_id_.fetch_add(1);
    auto created = t->create(layout, name, id, members);
    if (!created.ok()) return created.status().with_context(api);
    return attach_all(e, run, api, name, std::shared_ptr<DomainObject>(std::move(*created)), layout, id, chips, ranks,
                      buffers);
  }

  // Every member chip (domain rank ranks[i] on chips[i]) attaches to `obj`.
  static Expected<std::shared_ptr<CommDomain>> attach_all(Engine& e, RunState* run, const std::string& api,
                                                          const std::string& name, std::shared_ptr<DomainObject> obj,
                                                          const cm::DomainLayout& layout, uint64_t id,
                                                          std::span<const int> chips, std::span<const int> ranks,
                                                          std::span<const DomainBufferSpec> buffers) {
    const int n = static_cast<int>(chips.size());
    const int nranks = layout.nranks;
    // Every member attaches at once: they meet at a barrier inside.
    std::vector<bool> posted(static_cast<size_t>(n), false);
    std::vector<Expected<uint64_t>> got(static_cast<size_t>(n), Expected<uint64_t>(uint64_t{0}));
    auto abort_domain = [obj, nranks] {
      obj->header()->abort.store(1, std::memory_order_release);
      cm::ring(obj->header()->bell);
      for (int r = 0; r < nranks; ++r) cm::ring(obj->sync(r)->bell);
    };
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

    auto d = std::make_shared<CommDomain>();
    d->name_ = name;
    d->window_size_ = layout.window_size;
    d->nranks_ = nranks;
    for (int r = 0; r < n; ++r) {
      DomainMember m;
      m.chip = chips[r];
      m.rank = ranks[r];
      m.size = nranks;
      m.device_ctx = *got[r] + layout.context(ranks[r]);
      m.window_base = *got[r] + layout.window(ranks[r]);
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
    Engine* eng = &e;
    std::lock_guard<std::mutex> lk(e.mu_);
    run->on_abort.push_back(abort_domain);
    run->at_fence.push_back([eng, obj, members, id, name]() -> Status {
      Status first;
      // A closing worker stops its children next; a member may still be
      // inside a kernel and could not serve the request before its
      // deadline. Their mappings end with them; the parent's goes here.
      const bool closing = eng->closing_;
      for (int c : members) {
        if (closing) break;
        Status s = release_member(*eng, c, id);
        if (first.ok() && !s.ok()) first = s.with_context("comm domain '" + name + "'");
      }
      eng->live_domains_.fetch_sub(1, std::memory_order_acq_rel);
      return first;
    });
    if (!run->first_error.ok()) abort_domain();  // the run failed while we allocated
    return d;
  }

  static Status release_member(Engine& e, int chip, uint64_t id) {
    ControlRequest req;
    req.op = ControlOp::kReleaseDomain;
    req.args[0] = id;
    return e.chip_endpoint(chip).control(req, Deadline::after_ms(e.cfg_.control_timeout_ms)).status();
  }
};

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
