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
#pragma once

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
  // poller. unbind() before the transport goes (close()).
  void bind(Transport* transport, int node, int nodes);
  void unbind();

  int node() const override;
  int nodes() const override;
  Expected<std::unique_ptr<node::DomainObject>> create(const kernels::comm::DomainLayout& layout,
                                                       const std::string& name, uint64_t id,
                                                       std::span<const node::GlobalMember> members) override;
  node::WindowExchange& member_exchange() override { return *memfd_; }

  // Progress thread: a DOMAIN_* message from node `src`.
  void handle(int src, Msg type, Reader& r);

  struct Part;  // this node's part of one domain
  using Key = std::pair<std::string, uint64_t>;

 private:
  bool poll();  // progress thread
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
  // Progress thread only.
  std::map<Key, std::shared_ptr<Part>> live_;
  std::map<Key, std::vector<int>> early_arrivals_;
  // The fingerprints (members, ranks, window size) other nodes announced
  // for a domain not yet created here, by node: checked at creation.
  std::map<Key, std::vector<std::pair<int, uint64_t>>> early_prints_;
  std::map<Key, int> early_aborts_;
};

}  // namespace taskring::net
