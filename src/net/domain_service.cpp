// Comm domains spanning nodes over MPI (see domain_service.hpp).
#include "domain_service.hpp"
#include "domain_rejoin.hpp"
#include "host_share.hpp"
#include "wire_messages.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "taskring/kernels/comm_remote.hpp"

namespace taskring::net {

namespace cm = kernels::comm;

namespace {
// A DOMAIN_DATA message is sent once it holds this much (the transport
// drops messages over kMaxMessageBytes; one request adds at most
// kRemoteChunkBytes + 36).
constexpr size_t kBatchBytes = 512 << 10;
static_assert(kBatchBytes + cm::kRemoteChunkBytes + 64 < kMaxMessageBytes);
// The id of a domain object that several nodes of a host share: its
// creator's node in bits 40..62 and its own id below, so it never equals a
// node's own (counted) domain ids there.
constexpr uint64_t kSharedIdBit = uint64_t{1} << 63;
constexpr uint64_t kLocalIdMask = (uint64_t{1} << 40) - 1;

DomainKey key_of(const DomainService::Key& k) { return DomainKey{k.first, k.second}; }
}  // namespace

struct DomainService::Part {
  Key key;
  cm::DomainLayout layout;
  char* base = nullptr;      // the whole object, mapped by this process
  std::vector<int> node_of;  // per domain rank
  std::vector<int> local;    // domain ranks on this node
  std::vector<int> peers;    // the other member nodes
  uint64_t fingerprint = 0;  // members, ranks, window size: the same on every member node
  uint64_t offnode_mask = 0;  // domain ranks on other hosts (or, unshared, other nodes)
  std::vector<int> share_to;  // the host's other member nodes, when this node created the shared object
  bool owns_header = false;   // this node made the object: it writes the mask and ring size
  bool shared = false;        // one object with other nodes of this host
  int refused_by = -1;        // the host creator whose domain differs (this node's object is its own)
  uint32_t abort_code = 1;    // what this node's node stores in the abort word (DomainObject::abort_code)
  bool announced = false, abort_sent = false, print_sent = false;

  cm::DomainHeader* header() const { return reinterpret_cast<cm::DomainHeader*>(base); }
  cm::SyncBlock* sync(int r) const { return reinterpret_cast<cm::SyncBlock*>(base + layout.sync(r)); }
  ~Part() {
    if (base != nullptr) munmap(base, layout.total);
  }
};

namespace {

// What the engine holds: the memfd object (its members map it) plus this
// node's service of it, which ends when the engine sweeps the domain.
class GlobalObject final : public node::DomainObject {
 public:
  GlobalObject(std::unique_ptr<node::DomainObject> inner, std::shared_ptr<DomainService::Part> part,
               std::function<void()> on_release)
      : inner_(std::move(inner)), part_(std::move(part)), on_release_(std::move(on_release)) {}
  uint32_t abort_code() const override { return part_->abort_code; }
  ~GlobalObject() override { on_release_(); }
  cm::DomainHeader* header() override { return inner_->header(); }
  cm::SyncBlock* sync(int rank) override { return inner_->sync(rank); }
  int member_fd(int rank) override { return inner_->member_fd(rank); }
  // Never called: a global domain is reused through rejoin(), each node
  // clearing its own ranks once every node agreed.
  Status clear_for_reuse() override { return unimplemented("a domain spanning nodes is reused through rejoin()"); }
  // Only an object that every member node shares (no rank on another
  // host): its nodes meet in its header. Parts that relay through MPI are
  // not reused (their rings and the peers' parts would need the same).
  bool reusable_across_nodes() const override { return part_->peers.empty() && part_->refused_by < 0; }
  Expected<bool> rejoin(uint32_t use, uint64_t timeout_ms) override {
    if (!reusable_across_nodes()) return false;
    return rejoin_shared(view(), use, timeout_ms);
  }
  void leave() override {
    if (reusable_across_nodes()) leave_shared(view());
  }

 private:
  RejoinView view() const { return RejoinView{part_->base, part_->layout, part_->local, part_->owns_header}; }

  std::unique_ptr<node::DomainObject> inner_;
  std::shared_ptr<DomainService::Part> part_;
  std::function<void()> on_release_;
};

}  // namespace

DomainService::DomainService() : memfd_(node::make_memfd_window_exchange()) {}
DomainService::~DomainService() = default;

void DomainService::bind(Transport* transport, int node, int nodes, uint64_t share_timeout_ms) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    share_timeout_ms_ = share_timeout_ms;
    transport_ = transport;
    progress_ = transport;
    node_ = node;
    nodes_ = nodes;
  }
  transport->add_poller([this] { return poll(); });
  // What poll() acts on is announced on each live domain's header bell: a
  // member's arrival, this node's abort, and every request a member queues
  // for another node (comm_remote.cpp rings it), so the idle progress
  // thread parks on those bells instead of polling the rings in slices.
  // A part with no member node on another host (its nodes share the one
  // object) has nothing for this thread to send: its bell, which the
  // one-host barrier rings too, must not wake it.
  transport->add_wake_source([this](std::vector<Transport::WakeBell>& out) {
    for (auto& [k, p] : live_)
      if (!p->peers.empty()) out.push_back({&p->header()->bell.epoch, &p->header()->bell.parked});
  });
}

void DomainService::unbind() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    transport_ = nullptr;
    shares_.clear();
  }
  share_cv_.notify_all();
}

int DomainService::node() const {
  std::lock_guard<std::mutex> lk(mu_);
  return node_;
}

int DomainService::nodes() const {
  std::lock_guard<std::mutex> lk(mu_);
  return transport_ != nullptr ? nodes_ : 0;
}

namespace {

uint64_t fingerprint(const cm::DomainLayout& layout, std::span<const node::GlobalMember> members) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
  };
  mix(static_cast<uint64_t>(layout.nranks));
  mix(layout.window_size);
  mix(layout.ring_bytes);
  for (const node::GlobalMember& m : members) {
    mix(static_cast<uint64_t>(m.node));
    mix(static_cast<uint64_t>(m.chip));
  }
  return h;
}

}  // namespace

uint64_t DomainService::ring_bytes(std::span<const node::GlobalMember> members) const {
  const std::vector<int> host = host_nodes(members, node());
  for (const node::GlobalMember& m : members)
    if (!std::binary_search(host.begin(), host.end(), m.node)) return cm::kRemoteRingBytes;
  return 0;
}

std::vector<int> DomainService::host_nodes(std::span<const node::GlobalMember> members, int self) const {
  std::set<int> host{self};
  Transport* t = progress_;  // has_doorbell() reads what open_doorbells() set before the thread started
  for (const node::GlobalMember& m : members)
    if (t != nullptr && t->has_doorbell(m.node)) host.insert(m.node);
  return std::vector<int>(host.begin(), host.end());
}

Expected<DomainService::Share> DomainService::wait_share(const Key& k, int creator) {
  std::unique_lock<std::mutex> lk(mu_);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(share_timeout_ms_);
  while (true) {
    if (auto it = shares_.find(k); it != shares_.end()) {
      const Share got = it->second;
      shares_.erase(it);
      return got;
    }
    if (transport_ == nullptr) return unavailable("the L4 transport stopped");
    if (share_cv_.wait_until(lk, until) == std::cv_status::timeout && shares_.count(k) == 0)
      return deadline_exceeded("MPI rank " + std::to_string(creator) +
                               ", the first member node on this host, did not share its part within " +
                               std::to_string(share_timeout_ms_) + " ms (does it allocate this domain?)");
  }
}

Expected<std::unique_ptr<node::DomainObject>> DomainService::make_object(Part& part, const cm::DomainLayout& layout,
                                                                         const std::string& name, uint64_t id,
                                                                         std::span<const node::GlobalMember> members) {
  const std::vector<int> host = host_nodes(members, node_);
  // Ranks on nodes of `group` reach each other in this object; the others
  // through the rings.
  auto split = [&](const std::vector<int>& group) {
    part.offnode_mask = 0;
    std::set<int> peers;
    for (size_t r = 0; r < members.size(); ++r) {
      if (std::binary_search(group.begin(), group.end(), members[r].node)) continue;
      part.offnode_mask |= uint64_t{1} << r;
      peers.insert(members[r].node);
    }
    part.peers.assign(peers.begin(), peers.end());
  };
  part.owns_header = true;
  if (host.size() == 1) {
    split(host);
    return memfd_->create(layout, name, id);
  }
  const int creator = host.front();
  if (creator == node_) {
    split(host);
    part.shared = true;
    part.abort_code = 2u + static_cast<uint32_t>(node_);
    for (int n : host)
      if (n != node_) part.share_to.push_back(n);
    return memfd_->create(layout, name, kSharedIdBit | (static_cast<uint64_t>(node_) << 40) | (id & kLocalIdMask));
  }
  TASKRING_ASSIGN_OR_RETURN(Share share, wait_share(part.key, creator));
  if (share.fingerprint != part.fingerprint) {
    // Another domain under this name: this node keeps its own object and
    // refuses the domain naming the creator (poll() tells the others).
    split({node_});
    part.refused_by = creator;
    return memfd_->create(layout, name, id);
  }
  TASKRING_ASSIGN_OR_RETURN(auto obj, open_host_shared(share.pid, share.fd, layout, name, share.id));
  split(host);
  part.owns_header = false;
  part.shared = true;
  part.abort_code = 2u + static_cast<uint32_t>(node_);
  return obj;
}

namespace {

// Ends every wait of the domain here, naming the node whose domain of this
// name and sequence is another one.
void mark_mismatch(DomainService::Part& p, int from_node);

}  // namespace

Expected<std::unique_ptr<node::DomainObject>> DomainService::create(const cm::DomainLayout& layout,
                                                                    const std::string& name, uint64_t id,
                                                                    std::span<const node::GlobalMember> members) {
  const std::string what = "global comm domain '" + name + "'";
  Transport* t;
  uint64_t seq;
  int self;
  {
    std::lock_guard<std::mutex> lk(mu_);
    t = transport_;
    if (t == nullptr) return unavailable(what + ": the L4 transport is not running");
    seq = next_seq_[name]++;
    self = node_;
  }
  // No rings only where every member node shares the object (ring_bytes()).
  if (static_cast<size_t>(layout.nranks) != members.size() ||
      (layout.ring_bytes != 0 && layout.ring_bytes <= cm::RemoteRing::kDataOffset))
    return internal_error(what + ": layout of " + std::to_string(layout.nranks) + " ranks, " +
                          std::to_string(members.size()) + " members, ring " + std::to_string(layout.ring_bytes) +
                          " B");
  auto part = std::make_shared<Part>();
  part->key = Key{name, seq};
  part->layout = layout;
  part->fingerprint = fingerprint(layout, members);
  for (size_t r = 0; r < members.size(); ++r) {
    part->node_of.push_back(members[r].node);
    if (members[r].node == self) part->local.push_back(static_cast<int>(r));
  }
  auto inner = make_object(*part, layout, name, id, members);
  if (inner.ok() && layout.ring_bytes == 0 && !part->peers.empty() && part->refused_by < 0)
    inner = internal_error("no request rings, but ranks on another host");
  if (inner.ok() && (*inner)->member_fd(0) >= 0) {
    void* v = mmap(nullptr, layout.total, PROT_READ | PROT_WRITE, MAP_SHARED, (*inner)->member_fd(0), 0);
    if (v == MAP_FAILED)
      inner = unavailable("mapping its " + std::to_string(layout.total) + " B failed: " + std::strerror(errno));
    else
      part->base = static_cast<char*>(v);
  }
  if (!inner.ok()) {
    // The other member nodes wait for this node's ranks: end their waits.
    const std::vector<char> m = DomainAbortMsg{key_of(part->key)}.encode();
    std::set<int> others(part->node_of.begin(), part->node_of.end());
    others.erase(self);
    t->post([t, m, others] {
      for (int n : others) t->send(n, m);
    });
    return inner.status().with_context(what);
  }
  if (part->owns_header) {
    // Read by the members when they attach (after this returns), and by the
    // host's other member nodes once they open the object (after the share).
    part->header()->offnode_mask = part->offnode_mask;
    part->header()->ring_bytes = layout.ring_bytes;
  }
  if (part->refused_by >= 0) mark_mismatch(*part, part->refused_by);
  std::weak_ptr<DomainService> weak = weak_from_this();
  const Key key = part->key;
  auto release = [weak, key] {
    auto self_ptr = weak.lock();
    if (!self_ptr) return;
    std::lock_guard<std::mutex> lk(self_ptr->mu_);
    if (self_ptr->transport_ != nullptr) self_ptr->transport_->post([self_ptr, key] { self_ptr->remove(key); });
  };
  t->post([s = shared_from_this(), part] { s->add(part); });
  if (!part->share_to.empty()) {
    const std::vector<char> m = DomainShareMsg{key_of(part->key), static_cast<int32_t>(getpid()),
                                               (*inner)->member_fd(0), (*inner)->header()->id, part->fingerprint}
                                    .encode();
    t->post([t, m, to = part->share_to] {
      for (int n : to) t->send(n, m);
    });
  }
  return std::unique_ptr<node::DomainObject>(
      std::make_unique<GlobalObject>(std::move(*inner), part, std::move(release)));
}

// ---- progress thread --------------------------------------------------------

namespace {

// Ends every wait of the domain here, naming the node whose domain of this
// name and sequence is another one.
void mark_mismatch(DomainService::Part& p, int from_node) {
  uint32_t none = 0;
  p.header()->abort.compare_exchange_strong(none, cm::kAbortMismatch + static_cast<uint32_t>(from_node),
                                            std::memory_order_acq_rel);
  cm::ring(p.header()->bell);
  for (int r : p.local) cm::ring(p.sync(r)->bell);
}

}  // namespace

void DomainService::add(std::shared_ptr<Part> p) {
  const Key k = p->key;
  live_[k] = p;
  if (p->refused_by >= 0) {
    // This node refused the host's shared object (create() marked it):
    // tell the other member nodes now, with the fingerprint alone. Its
    // members fail at once, so the engine may sweep the domain before any
    // poll() sees it.
    const std::vector<char> m = DomainArrivedMsg{key_of(k), {}, p->fingerprint}.encode();
    for (int n : p->peers) progress_->send(n, m);
    p->print_sent = true;
  }
  if (auto it = early_prints_.find(k); it != early_prints_.end()) {
    for (const auto& [node, print] : it->second)
      if (print != p->fingerprint) mark_mismatch(*p, node);
  }
  for (auto it = early_prints_.begin(); it != early_prints_.end();)
    it = it->first.first == k.first && it->first.second <= k.second ? early_prints_.erase(it) : std::next(it);
  if (auto it = early_arrivals_.find(k); it != early_arrivals_.end()) {
    for (int r : it->second) p->header()->arrived[r].store(1, std::memory_order_release);
    cm::ring(p->header()->bell);
  }
  if (auto it = early_aborts_.find(k); it != early_aborts_.end()) abort_part(*p, it->second);
  // What was kept for this domain and older ones of its name is done with.
  for (auto it = early_arrivals_.begin(); it != early_arrivals_.end();)
    it = it->first.first == k.first && it->first.second <= k.second ? early_arrivals_.erase(it) : std::next(it);
  for (auto it = early_aborts_.begin(); it != early_aborts_.end();)
    it = it->first.first == k.first && it->first.second <= k.second ? early_aborts_.erase(it) : std::next(it);
}

void DomainService::remove(const Key& k) {
  auto it = live_.find(k);
  if (it == live_.end()) return;
  // A run that failed at once can be swept before poll() saw the part:
  // its peers must still hear of it.
  send_abort_if_failed(k, *it->second);
  // The members are done (the engine swept the domain), but what they
  // enqueued last (a final flag) may still be in their rings: send it.
  if (it->second->announced) {
    std::map<int, std::vector<char>> out;
    drain(*it->second, out);
    for (auto& [n, b] : out)
      if (!b.empty()) progress_->send(n, std::move(b));
  }
  live_.erase(it);
}

void DomainService::abort_part(Part& p, int from_node) {
  uint32_t none = 0;
  p.header()->abort.compare_exchange_strong(none, 2u + static_cast<uint32_t>(from_node), std::memory_order_acq_rel);
  cm::ring(p.header()->bell);
  for (int r : p.local) cm::ring(p.sync(r)->bell);
}

bool DomainService::send_abort_if_failed(const Key& k, Part& p) {
  if (p.abort_sent || p.header()->abort.load(std::memory_order_acquire) != p.abort_code) return false;
  for (int n : p.peers) progress_->send(n, DomainAbortMsg{key_of(k)}.encode());  // this node's run failed
  p.abort_sent = true;
  return true;
}

bool DomainService::poll() {
  bool any = false;
  for (auto& [k, pp] : live_) {
    Part& p = *pp;
    cm::DomainHeader* h = p.header();
    any |= send_abort_if_failed(k, p);
    if (!p.announced && !p.print_sent && h->abort.load(std::memory_order_acquire) >= cm::kAbortMismatch) {
      // This node refused the domain (another node's fingerprint differs)
      // before its own members all arrived, so it would never announce: its
      // peers would wait out the comm deadline. Send the fingerprint alone
      // (no arrivals) so that they refuse the domain now too.
      const std::vector<char> m = DomainArrivedMsg{key_of(k), {}, p.fingerprint}.encode();
      for (int n : p.peers) progress_->send(n, m);
      p.print_sent = true;
      any = true;
    }
    if (!p.announced) {
      bool all = true;
      for (int r : p.local) all = all && h->arrived[r].load(std::memory_order_acquire) != 0;
      if (!all) continue;
      const std::vector<char> m =
          DomainArrivedMsg{key_of(k), std::vector<int32_t>(p.local.begin(), p.local.end()), p.fingerprint}.encode();
      for (int n : p.peers) progress_->send(n, m);
      p.announced = true;
      any = true;
    }
    std::map<int, std::vector<char>> out;
    drain(p, out);
    for (auto& [n, b] : out) {
      if (b.empty()) continue;
      progress_->send(n, std::move(b));
      any = true;
    }
  }
  return any;
}

void DomainService::drain(Part& p, std::map<int, std::vector<char>>& out) {
  if (p.layout.ring_bytes == 0) return;  // every member node shares the object: nothing goes through MPI
  const int nranks = p.layout.nranks;
  for (int L : p.local) {
    auto* ring = reinterpret_cast<cm::RemoteRing*>(p.base + p.layout.ring(L));
    const uint64_t cap = ring->capacity;
    if (cap == 0) continue;
    const uint64_t head_at = ring->head.load(std::memory_order_acquire);
    uint64_t t = ring->tail.load(std::memory_order_relaxed);
    if (t == head_at) continue;
    while (t < head_at) {
      cm::RemoteReq q;
      std::memcpy(&q, ring->data + t % cap, sizeof(q));
      const auto op = static_cast<cm::RemoteOp>(q.op);
      const bool put = op == cm::RemoteOp::kPut;
      if ((put && q.len > cm::kRemoteChunkBytes) || (op == cm::RemoteOp::kPad && q.len >= cap)) {
        std::fprintf(stderr,
                     "taskring L4 node %d: domain '%s' rank %d wrote a malformed request (op %u, %llu B); "
                     "dropping the rest of its ring\n",
                     node_, p.key.first.c_str(), L, q.op, static_cast<unsigned long long>(q.len));
        t = head_at;
        break;
      }
      t += op == cm::RemoteOp::kPad ? sizeof(q) + q.len : cm::remote_entry_bytes(put ? q.len : 0);
      if (op == cm::RemoteOp::kPad) continue;
      if (q.peer < 0 || q.peer >= nranks || p.node_of[static_cast<size_t>(q.peer)] == node_) continue;
      const int dst = p.node_of[static_cast<size_t>(q.peer)];
      std::vector<char>& b = out[dst];
      if (b.empty()) b = DomainDataMsg::start(key_of(p.key));
      DomainRecord rec{static_cast<int32_t>(L), q, {}};
      if (put)
        rec.payload = std::string_view(ring->data + (t - cm::remote_entry_bytes(q.len)) % cap + sizeof(q), q.len);
      DomainDataMsg::append(b, rec);
      if (b.size() >= kBatchBytes) {
        progress_->send(dst, std::move(b));
        b.clear();
      }
    }
    ring->tail.store(t, std::memory_order_release);
    cm::ring(p.sync(L)->bell);  // a producer waiting for room
  }
}

// Applies the requests of node `src`'s members to this node's; the first
// one that breaks the rules (or a malformed message, `decoded`) aborts the
// domain, and the requests after it are dropped.
void DomainService::apply(Part& p, int src, const DomainDataMsg& m, const Status& decoded) {
  const int nranks = p.layout.nranks;
  const uint64_t ws = p.layout.window_size;
  const char* bad = nullptr;
  for (size_t i = 0; i < m.records.size() && bad == nullptr; ++i) {
    const int32_t from = m.records[i].from;
    const cm::RemoteReq& q = m.records[i].req;
    if (from < 0 || from >= nranks || p.node_of[static_cast<size_t>(from)] != src || q.peer < 0 || q.peer >= nranks ||
        p.node_of[static_cast<size_t>(q.peer)] != node_) {
      bad = "a request between ranks that are not on these nodes";
      break;
    }
    char* win = p.base + p.layout.window(q.peer);
    cm::SyncBlock* s = p.sync(q.peer);
    switch (static_cast<cm::RemoteOp>(q.op)) {
      case cm::RemoteOp::kPut:
        if (q.off > ws || q.len > ws - q.off) {
          bad = "a put outside the window";
          break;
        }
        std::memcpy(win + q.off, m.records[i].payload.data(), q.len);
        break;
      case cm::RemoteOp::kNotify: {
        if (q.off % 4 != 0 || q.off > ws - 4) {
          bad = "a notify outside the window";
          break;
        }
        auto* sig = reinterpret_cast<std::atomic<uint32_t>*>(win + q.off);
        const auto v = static_cast<uint32_t>(q.value);
        if ((q.value >> 32) == static_cast<uint64_t>(cm::NotifyOp::kAdd))
          sig->fetch_add(v, std::memory_order_acq_rel);
        else
          sig->store(v, std::memory_order_release);
        cm::ring(s->bell);
        break;
      }
      case cm::RemoteOp::kFlag:
        s->flags[from].store(static_cast<uint32_t>(q.value), std::memory_order_release);
        cm::ring(s->bell);
        break;
      case cm::RemoteOp::kBarrier:
        s->barrier[from].store(static_cast<uint32_t>(q.value), std::memory_order_release);
        cm::ring(s->bell);
        break;
      default: bad = "an unknown request";
    }
  }
  if (bad == nullptr && decoded.ok()) return;
  std::fprintf(stderr, "taskring L4 node %d: DOMAIN_DATA from rank %d for domain '%s' has %s; aborting the domain\n",
               node_, src, p.key.first.c_str(), bad != nullptr ? bad : decoded.message().c_str());
  abort_part(p, src);
}

void DomainService::handle(int src, Msg type, Reader& r) {
  switch (type) {
    case Msg::kDomainArrived: {
      DomainArrivedMsg m;
      if (m.decode(r).ok()) on_arrived(src, m);
      return;
    }
    case Msg::kDomainData: {
      DomainDataMsg m;
      Status s = m.decode(r);
      if (m.key.name.empty() && !s.ok()) return;  // not even a key
      auto it = live_.find(Key{m.key.name, m.key.seq});
      if (it != live_.end()) apply(*it->second, src, m, s);  // else: a swept domain's last words
      return;
    }
    case Msg::kDomainShare: {
      DomainShareMsg m;
      if (!m.decode(r).ok()) return;
      {
        std::lock_guard<std::mutex> lk(mu_);
        shares_[Key{m.key.name, m.key.seq}] = Share{m.pid, m.fd, m.id, m.fingerprint};
      }
      share_cv_.notify_all();
      return;
    }
    case Msg::kDomainAbort: {
      DomainAbortMsg m;
      if (!m.decode(r).ok()) return;
      const Key k{m.key.name, m.key.seq};
      auto it = live_.find(k);
      if (it == live_.end())
        early_aborts_[k] = src;
      else
        abort_part(*it->second, src);
      return;
    }
    default: return;
  }
}

void DomainService::on_arrived(int src, const DomainArrivedMsg& m) {
  const Key k{m.key.name, m.key.seq};
  auto it = live_.find(k);
  if (it == live_.end()) {
    auto& e = early_arrivals_[k];
    for (int x : m.ranks)
      if (x >= 0 && x < cm::kMaxRanks) e.push_back(x);
    early_prints_[k].emplace_back(src, m.fingerprint);
    return;
  }
  Part& p = *it->second;
  if (m.fingerprint != p.fingerprint) {
    mark_mismatch(p, src);  // its arrivals are of another domain: not counted
    return;
  }
  for (int x : m.ranks)
    if (x >= 0 && x < p.layout.nranks && p.node_of[static_cast<size_t>(x)] == src)
      p.header()->arrived[x].store(1, std::memory_order_release);
  cm::ring(p.header()->bell);
}

}  // namespace taskring::net
