// DomainService: comm domains spanning nodes (L4 global domains) over MPI.
//
// Each member node keeps its part of a domain in a memfd of the full
// DomainLayout (created here, mapped by its own member chips exactly like a
// one-node domain), so members on the same node keep plain stores. What a
// member addresses to a rank on another node goes into its request ring
// (kernels/comm_remote.hpp); this node's MPI progress thread drains the
// rings (a poller of the Transport), batches the requests per destination
// node into DOMAIN_DATA messages (point-to-point, in order), and the
// destination's progress thread applies them to its members' windows and
// sync blocks and rings their doorbells. Bytes between nodes move only
// through MPI, never through memory both can see.
//
// Allocation: every member node allocates the same domains of a name in the
// same order (SPMD), so (name, n-th allocation of that name) identifies a
// domain on every node without a round trip through rank 0. Once all of a
// node's members arrived (zeroed their windows), the node sends
// DOMAIN_ARRIVED to the other member nodes, whose progress threads mark
// those ranks arrived in their parts: the allocation barrier of comm_domain
// then spans nodes with its own deadline, naming missing ranks. An abort of
// the domain on a node (its run failed) is sent as DOMAIN_ABORT; receivers
// set the abort word to 2 + that node, so every wait there ends at once,
// naming the node. DOMAIN_ARRIVED also carries the domain's fingerprint
// (its members, ranks and window size): a node whose domain of that name
// and sequence differs aborts it with kAbortMismatch + the other node, so
// every wait ends at once naming it instead of running into its deadline or
// mixing two domains. Messages for a domain not (yet) created here are kept
// (arrivals, aborts) or dropped (data for a swept domain).
//
// Member nodes on one host share one object (host_share.hpp): the lowest
// member node of the host creates it and sends DOMAIN_SHARE to the other
// member nodes of the host, which open the same object; its header's
// off-node mask marks only ranks on other hosts. Members on one host then
// reach each other with plain stores and meet in one header (arrivals,
// barrier, abort), as on one node; no progress thread is on their path.
// Only what goes to another host takes the rings and MPI. A node whose
// domain differs from the creator's (fingerprint) makes its own object and
// refuses the domain as above. "On one host" is Transport::has_doorbell:
// NetConfig::fast_paths = false turns sharing off (every node its own
// object, everything through MPI).
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "node/window_exchange.hpp"
#include "transport.hpp"
#include "wire.hpp"

namespace taskring::net {

struct DomainArrivedMsg;
struct DomainDataMsg;

class DomainService final : public node::GlobalDomainTransport, public std::enable_shared_from_this<DomainService> {
 public:
  DomainService();
  ~DomainService() override;

  // After MPI started, before the transport's thread starts: registers the
  // poller. unbind() before the transport goes (close()). A node of a host
  // waits at most `share_timeout_ms` in create() for the host's creator to
  // share the domain.
  void bind(Transport* transport, int node, int nodes, uint64_t share_timeout_ms);
  void unbind();

  int node() const override;
  int nodes() const override;
  uint64_t ring_bytes(std::span<const node::GlobalMember> members) const override;
  Expected<std::unique_ptr<node::DomainObject>> create(const kernels::comm::DomainLayout& layout,
                                                       const std::string& name, uint64_t id,
                                                       std::span<const node::GlobalMember> members) override;
  node::WindowExchange& member_exchange() override { return *memfd_; }

  // Progress thread: a DOMAIN_* message from node `src`.
  void handle(int src, Msg type, Reader& r);

  struct Part;  // this node's part of one domain
  using Key = std::pair<std::string, uint64_t>;

 private:
  // What a DOMAIN_SHARE said: the object of the host's creator.
  struct Share {
    int pid = 0, fd = -1;
    uint64_t id = 0, fingerprint = 0;
  };
  // The member nodes on this host (ascending, this node included): more
  // than one means one shared object, created by the first.
  std::vector<int> host_nodes(std::span<const node::GlobalMember> members, int self) const;
  // This node's object of the domain: made here (no other member node on
  // this host, or this node is the host's creator) or opened from the
  // creator's share; fills the part's mask, peers and sharing.
  Expected<std::unique_ptr<node::DomainObject>> make_object(Part& part, const kernels::comm::DomainLayout& layout,
                                                            const std::string& name, uint64_t id,
                                                            std::span<const node::GlobalMember> members);
  // Blocks (the caller's thread) until the creator's DOMAIN_SHARE for `k`
  // arrived, or the share timeout.
  Expected<Share> wait_share(const Key& k, int creator);
  bool poll();  // progress thread
  // Progress thread: DOMAIN_ABORT to the part's peers once, when this
  // node's run failed (its abort word holds the part's abort code).
  bool send_abort_if_failed(const Key& k, Part& p);
  void add(std::shared_ptr<Part> p);
  void remove(const Key& k);
  void drain(Part& p, std::map<int, std::vector<char>>& out);
  void apply(Part& p, int src, const DomainDataMsg& m, const Status& decoded);
  void on_arrived(int src, const DomainArrivedMsg& m);
  void abort_part(Part& p, int from_node);

  std::unique_ptr<node::WindowExchange> memfd_;
  mutable std::mutex mu_;
  Transport* transport_ = nullptr;  // under mu_ (create / destroy run on other threads); null after unbind()
  Transport* progress_ = nullptr;   // the same, for the progress thread itself: set in bind(), never cleared
  int node_ = -1, nodes_ = 0;
  std::map<std::string, uint64_t> next_seq_;  // under mu_
  std::map<Key, Share> shares_;               // under mu_: received, not yet taken by create()
  std::condition_variable share_cv_;
  uint64_t share_timeout_ms_ = 0;
  // Progress thread only.
  std::map<Key, std::shared_ptr<Part>> live_;
  std::map<Key, std::vector<int>> early_arrivals_;
  // The fingerprints (members, ranks, window size) other nodes announced
  // for a domain not yet created here, by node: checked at creation.
  std::map<Key, std::vector<std::pair<int, uint64_t>>> early_prints_;
  std::map<Key, int> early_aborts_;
};

}  // namespace taskring::net
