// NetWorker: level 4. Several L3 nodes, one per MPI rank, driven by the L4
// orchestrator and scheduler on rank 0 — the same engine as the L3 node
// (src/node/engine*.cpp) over one MpiEndpoint per rank: the level is a label.
//
//   // Every rank runs the same program (SPMD), e.g. under
//   //   mpirun --oversubscribe -np 3 prog
//   NetConfig cfg; cfg.node.chips = 2; cfg.node.sub_workers = 1;
//   NetWorker w(cfg);
//   int add = *w.node().register_sub("add", add_fn);     // node callables, before init()
//   int step = *w.register_task("step", step_fn);         // L4 callables, same order on every rank
//   TASKRING_RETURN_IF_ERROR(w.init());                   // node init, MPI init, READY barrier
//   if (w.rank() == 0) {
//     RemoteBuffer b = *w.remote_malloc(/*rank=*/1, 4096);
//     ChipTensor t = *w.remote_tensor(b.whole(), {1024}, DataType::FLOAT32);
//     w.run([&](Orchestrator& o) { ChipTaskArgs a; a.add_inout(t); return o.submit_next_level(step, a, 1); });
//   } else {
//     w.serve();                                          // until rank 0 closes
//   }
//   w.close();
//
// Startup. init() initialises this rank's node first (it forks the chip and
// SUB children: fork before threads, and before MPI starts its own
// threads), then MPI (MPI_Init_thread asking MPI_THREAD_MULTIPLE, needing
// MPI_THREAD_SERIALIZED: one progress thread per rank makes the MPI calls
// after init; under MULTIPLE the scheduler and executors also send their
// control messages themselves), then every rank sends
// rank 0 a HELLO: protocol version, taskring version and compiler, the
// build (size and hash of the binary holding the L4 code), the names of its
// L4 callables, its node's chips, SUB workers and L2 runtime, the number of
// ranks it expects (NetConfig::expected_ranks), the caller's job fields
// (NetConfig::job: e.g. workload and parameters) and its node's init result.
// Rank 0 answers READY only when every rank's node is READY and everything
// matches rank 0's; otherwise every rank's init() fails with the same error
// naming the rank and the first field that differs. One
// deadline (startup_timeout_ms) covers the node init and the handshake.
// MPI_Init itself is not bounded by it (mpirun starts the ranks).
//
// Remote tensors. A buffer lives on one rank (its owner) inside that rank's
// node shared heap and is named by a descriptor (owner rank, buffer id,
// generation, byte range). remote_tensor() turns a descriptor into a
// ChipTensor whose address is a dependency key (not a pointer: bits encode
// owner, id and generation), so the L4 engine infers dependencies with the
// L2/L3 rules (RAW, WAW, WAR over identity + byte ranges, overlapping views
// that start at different offsets included). When a task runs on rank r,
// every tensor owned by another rank is fetched into r's staging area with
// MPI point-to-point, and written ranges are sent back to their owner before
// the task reports completion. Never through files.
//
// Failures. A node task's error reaches run() with each level's prefix
// (rank, then node, then chip); each hop carries at most kMaxErrorBytes of
// text. A rank whose heartbeat stops for peer_timeout_ms (dead or hung) is
// declared lost: its tasks fail with UNAVAILABLE naming the rank, the error
// is printed on rank 0's stderr, and abort_grace_ms later the job ends with
// MPI_Abort (a lost peer makes MPI_Finalize unsafe). A rank killed by a
// signal is usually noticed first by mpirun, which ends the whole job and
// names the rank itself. Rank 0 lost: every other rank aborts the job the
// same way.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "taskring/base/clock.hpp"
#include "taskring/base/expected.hpp"
#include "taskring/node/node_worker.hpp"

namespace taskring::net {

using node::NodeConfig;
using node::NodeWorker;
using node::Orchestrator;
using node::OrchFunction;
using node::RunHandle;
using node::SubmitOptions;

// Wire protocol version; ranks that disagree are rejected at startup.
// 2: FETCH without a reply on success; 3: job identity in HELLO; 4: direct
// transfers (TransferMsg::direct, replies on their own tag).
inline constexpr uint32_t kNetProtocolVersion = 4;
// Error text carried per hop (rank -> rank 0); longer text is cut and ends
// with "[truncated]".
inline constexpr size_t kMaxErrorBytes = 1024;
// Limits of the descriptor encoding (see remote_key.hpp).
inline constexpr int kMaxRanks = 256;
inline constexpr uint32_t kMaxBuffersPerRank = 16384;
inline constexpr uint64_t kMaxBufferBytes = 1ull << 32;

// A node task: runs on the target rank with args whose tensors point into
// that rank's node shared heap (fetched there when owned elsewhere). It
// usually calls node.run(...) to run chip and SUB tasks.
using NodeTask = std::function<Status(NodeWorker& node, const ChipTaskArgs& args)>;

// Names a byte range of a remote buffer.
struct RemoteTensor {
  int owner = -1;           // rank that holds the bytes
  uint32_t buffer_id = 0;   // per owner
  uint32_t generation = 0;  // bumped when the id is freed and reused (mod 256)
  uint64_t offset = 0;      // bytes from the buffer start
  uint64_t nbytes = 0;
};

struct RemoteBuffer {
  int owner = -1;
  uint32_t buffer_id = 0;
  uint32_t generation = 0;
  uint64_t bytes = 0;
  RemoteTensor whole() const { return RemoteTensor{owner, buffer_id, generation, 0, bytes}; }
  RemoteTensor range(uint64_t offset, uint64_t nbytes) const {
    return RemoteTensor{owner, buffer_id, generation, offset, nbytes};
  }
};

struct NetConfig {
  NodeConfig node;  // this rank's node; shared_bytes grows by pool_bytes + staging_bytes
  // One deadline for the whole tree: node init on every rank + the READY
  // handshake.
  uint64_t startup_timeout_ms = 60000;
  // A rank silent this long (no heartbeat; sent every peer_timeout_ms / 8)
  // is declared lost.
  uint64_t peer_timeout_ms = 10000;
  // After a lost rank: the time rank 0 gives the caller to see the error
  // before it ends the job with MPI_Abort.
  uint64_t abort_grace_ms = 2000;
  // Deadline of one data transfer and of one control call.
  uint64_t transfer_timeout_ms = 60000;
  // Bytes of this rank's shared heap for buffers it owns (remote_malloc).
  uint64_t pool_bytes = 64ull << 20;
  // Bytes for copies of non-local tensors while a task runs here.
  uint64_t staging_bytes = 64ull << 20;
  // How long each rank's MPI progress thread keeps polling after its last
  // event before it parks on its doorbell (src/net/transport.hpp): the next
  // message of a conversation often follows within microseconds. Longer:
  // fewer wakes for back-to-back messages, more CPU taken from the chips on
  // a small machine. 0..1000000.
  uint64_t poll_window_us = 50;
  // Doorbells and direct channels (src/net/transport.hpp): a rank parks
  // until a peer on its host rings it, and under MPI_THREAD_MULTIPLE the
  // scheduler and executors send and receive TASK / COMPLETION themselves.
  // False: the progress threads carry every message and park in slices, the
  // path ranks on other hosts take; for tests and comparisons. The same on
  // every rank (the doorbell window is collective).
  bool fast_paths = true;
  // Optional per-rank setup of the node (inputs in its shared heap, ...):
  // runs in init() right after the node is up and before this rank says
  // HELLO, so no L4 task reaches a rank before it finished; an error fails
  // every rank's init() naming this rank, like a failed node init.
  std::function<Status(NodeWorker& node)> node_setup;
  // What defines the job besides the node config, as (field, value) pairs in
  // HELLO: every rank must send the same set (order aside), else init()
  // fails on every rank naming the rank and the field. The CLI sends the
  // workload, its parameters, the command and the rounds.
  std::vector<std::pair<std::string, std::string>> job;
  // The number of ranks this rank expects mpirun to start (`--nodes`); a
  // rank started in a job of another size fails init() on every rank.
  // 0: any.
  uint32_t expected_ranks = 0;
  // What this rank announces; differs from kNetProtocolVersion only in the
  // tests of the mismatch check.
  uint32_t protocol_version = kNetProtocolVersion;
  // close() calls MPI_Finalize when init() initialised MPI. False leaves MPI
  // running for a program that uses it after the worker (it then finalises
  // MPI itself); the bench compares against raw MPI this way.
  bool finalize_mpi = true;
};

class NetWorker {
 public:
  explicit NetWorker(NetConfig config);
  ~NetWorker();  // close(), errors ignored
  NetWorker(const NetWorker&) = delete;
  NetWorker& operator=(const NetWorker&) = delete;

  // The rank mpirun gave this process, known before init() (Open MPI /
  // PMIx environment; 0 outside mpirun): what a workload spanning nodes
  // needs to shape its node before MPI starts.
  static int launcher_rank();
  // This rank's node, for registering chip and SUB callables before init().
  NodeWorker& node();

  // Registers an L4 callable under a unique name; every rank must register
  // the same names in the same order (checked at startup). Before init().
  Expected<int> register_task(const std::string& name, NodeTask fn);

  // See the header comment. Once only; on failure only close() is left.
  Status init();

  // After init(): this rank and the number of ranks (nodes).
  int rank() const;
  int ranks() const;

  // Rank 0: runs `orch` as one L4 run; submit_next_level(callable, args,
  // rank) targets a rank; submit_next_level_group targets several ranks at
  // once. Other ranks: FAILED_PRECONDITION.
  RunHandle submit(OrchFunction orch, SubmitOptions options = {});
  Status run(OrchFunction orch, Deadline deadline = Deadline::after_ms(600000));

  // Other ranks: serves rank 0 until it closes the worker (OK) or is lost.
  Status serve();

  // Rank 0, between runs: buffers owned by `rank` (64-aligned, zeroed).
  Expected<RemoteBuffer> remote_malloc(int rank, uint64_t bytes);
  Status remote_free(const RemoteBuffer& buffer);
  // Copies between rank 0's memory and a remote range (MPI point-to-point).
  Status remote_copy_to(const RemoteTensor& dst, const void* src);
  Status remote_copy_from(void* dst, const RemoteTensor& src);

  // A task argument naming `desc` with `shapes` x `dtype` (row-major,
  // exactly desc.nbytes). Rejects unknown owners, ids, stale generations,
  // ranges outside the buffer and shape/size mismatches, naming the field.
  Expected<ChipTensor> remote_tensor(const RemoteTensor& desc, std::span<const uint32_t> shapes, DataType dtype) const;
  Expected<ChipTensor> remote_tensor(const RemoteTensor& desc, std::initializer_list<uint32_t> shapes,
                                     DataType dtype) const {
    return remote_tensor(desc, std::span<const uint32_t>(shapes.begin(), shapes.size()), dtype);
  }

  // Rank 0 shuts every rank down (SHUTDOWN, wait for their goodbye), then
  // every rank closes its node and finalises MPI; after a lost rank the job
  // is ended with MPI_Abort instead. Idempotent.
  Status close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace taskring::net
