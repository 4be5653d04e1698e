// NetWorker::Impl: the state of an L4 worker, shared by its bootstrap
// (net_bootstrap.cpp: init() in numbered steps), its message handlers and
// its API (net_worker.cpp).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "buffer_table.hpp"
#include "data_mover.hpp"
#include "domain_service.hpp"
#include "job_identity.hpp"
#include "mpi_endpoint.hpp"
#include "node/dag/engine.hpp"
#include "rank_server.hpp"
#include "remote_key.hpp"
#include "taskring/net/net_worker.hpp"
#include "transport.hpp"
#include "wire_messages.hpp"

namespace taskring::net {

// The least time the HELLO/WELCOME handshake gets, even when the node init
// and MPI_Init used up the startup deadline (see NetWorker::init).
inline constexpr uint64_t kMinHandshakeMs = 200;

// A CONTROL request of rank 0 waiting for its CONTROL_REPLY.
struct PendingControl {
  int rank = -1;
  std::atomic<bool> done{false};
  Status status;
  BufferEntry entry;
  Waiter waiter;
};

struct NetWorker::Impl {
  enum class State { kNew, kReady, kFailed, kClosed };

  NetConfig cfg;
  std::unique_ptr<NodeWorker> node;
  std::vector<std::string> names;
  std::vector<NodeTask> fns;
  State state = State::kNew;
  Status init_error;

  bool we_initialized_mpi = false;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = -1, size = 0;
  char* pool = nullptr;
  char* staging = nullptr;

  std::unique_ptr<BufferTable> own;
  // Comm domains spanning nodes; also held by the node (NodeConfig::
  // global_domains). Declared before the transport: it outlives it.
  std::shared_ptr<DomainService> domains;
  std::unique_ptr<Transport> transport;
  std::unique_ptr<DataMover> mover;
  std::unique_ptr<RankServer> server;
  // Rank 0 only.
  std::vector<std::unique_ptr<BufferTable>> mirrors;
  std::vector<MpiEndpoint*> endpoints;  // owned by the engine
  std::unique_ptr<node::Engine> engine;
  std::shared_ptr<RunHandle> last_run;

  // Handshake and shutdown, written on the progress thread.
  mutable std::mutex mu;
  Waiter waiter;
  std::vector<HelloMsg> hellos;  // rank 0: by rank; protocol 0 until it came
  std::vector<bool> hello_ok;    // ... and whether it decoded whole, in our protocol
  std::atomic<int> hello_count{0};
  std::atomic<bool> welcomed{false};
  Status welcome;
  std::atomic<int> byes{0};
  std::atomic<bool> shutdown_requested{false};
  std::map<uint64_t, std::shared_ptr<PendingControl>> controls;
  uint64_t next_control = 1;
  // A lost peer: MPI_Finalize would wait for it, so close() aborts the job.
  std::atomic<bool> lost{false};
  Status lost_status;

  // Progress thread: one message from `src` (wire_messages.hpp decodes it).
  void handle(int src, Msg type, Reader& r);
  void on_hello(int src, Reader& r);
  void on_welcome(Reader& r);
  void on_control_reply(Reader& r);
  void on_lost(int peer, uint64_t silent_ms);
  std::string rank_name(int r) const;
  Status check_hellos();
  JobIdentity my_job() const;
  Status check_tensor(const ChipTensor& t) const;
  Expected<BufferEntry> control(int rank, ControlOp op, uint64_t a0, uint64_t a1);
  Status require_rank0(const char* api) const;
  // remote_copy_to/from: rank 0, a known owner, a host pointer, a live range.
  Status check_copy(const char* api, const RemoteTensor& d, const void* host) const;
  [[noreturn]] void abort_job(const std::string& why);

  // ---- NetWorker::init, in its numbered steps (net_bootstrap.cpp) ----
  Status check_config() const;                                   // 0
  Status init_node();                                            // 1: the node's init result
  Status start_mpi(int* provided);                               // 2
  void start_services(const Status& node_status, int provided);  // 3
  std::unique_ptr<node::Engine> make_engine();                   // 3, rank 0
  void send_hello(const Status& node_status);                    // 4
  Status collect_hellos(Deadline deadline);                      // 5, rank 0
  Status await_welcome(Deadline deadline);                       // 6
  void go_live();                                                // 7
  // The verdict of a step that failed after MPI started: kept for close().
  Status fail_init(Status s);
};

}  // namespace taskring::net
