// RankServer: what every rank (rank 0 included) does for the L4 engine.
//
// TASK: received by the executor thread itself when rank 0 reaches this
// rank's doorbells under MPI_THREAD_MULTIPLE (Transport::Channel::kExecutor:
// rank 0 rings this rank's executor doorbell) and run at once, else decoded
// on the progress thread and queued; the one executor thread runs the tasks
// in order (the engine sends one at a time per rank). After another rank's
// task it probes the direct channel for RankServerConfig::spin_ns before it
// parks.
// COMPLETION goes the same way back (Channel::kEngine: rank 0's waiting
// thread receives it). For each
// tensor argument it maps the descriptor to local memory: a range this rank
// owns is used in place (its pool in the node's shared heap); any other is
// fetched from its owner into the staging area (bump-allocated per task).
// It then calls the registered NodeTask with the node, sends every written
// non-local range (INOUT, OUTPUT_EXISTING) back to its owner, and only then
// answers COMPLETION with the Status ("node task 'name': " + the node's
// error, cut to kMaxErrorBytes). NO_DEP ranges are fetched, never written
// back. CONTROL (buffer alloc/free) is answered on the progress thread. A
// fetch that timed out may still write the staging area later, so every
// later task on this rank fails with that error.
#pragma once

#include <atomic>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "data_mover.hpp"
#include "taskring/net/net_worker.hpp"

namespace taskring::net {

struct ControlMsg;

struct RankServerConfig {
  std::vector<std::string> names;  // L4 callables
  std::vector<NodeTask> fns;
  char* staging = nullptr;
  uint64_t staging_bytes = 0;
  uint64_t transfer_timeout_ms = 60000;
  // How long the executor probes for the next direct TASK before it parks
  // (NetConfig::poll_window_us; 0, park at once, where the ranks of the host
  // outnumber its CPUs or there is no direct channel).
  uint64_t spin_ns = 50'000;
};

class RankServer {
 public:
  RankServer(Transport& t, DataMover& mover, BufferTable& own, NodeWorker& node, RankServerConfig cfg)
      : t_(t), mover_(mover), own_(own), node_(node), cfg_(std::move(cfg)) {}
  ~RankServer() { stop(); }

  void start();
  void stop();

  // Progress thread.
  void on_task(int src, Reader& r);
  void on_control(int src, Reader& r);

 private:
  struct Job {
    int src = 0;
    uint64_t seq = 0;
    int callable = -1;
    std::vector<ChipTensor> tensors;
    std::vector<TensorArgType> tags;
    std::vector<uint64_t> scalars;
  };
  void loop();
  // A decoded CONTROL: allocate (zeroed) or free; the entry of an allocation.
  Status serve_control(const ControlMsg& m, BufferEntry* e);
  // A TASK's body into `j`; a TASK that does not decode is answered with
  // the error at once (false).
  bool decode_task(int src, Reader& r, Job* j);
  // Executor thread: the next TASK that arrived on the direct channel (each
  // take probes `probes` times, Transport::take); false when none is there.
  bool take_direct(Job* j, int probes);
  // Executor thread: the oldest queued TASK (the progress thread's path).
  bool next_job(Job* j);
  // Executor thread: probes the direct channel for cfg_.spin_ns; false when
  // time ran out, a TASK was queued, this rank's progress thread was rung
  // or stop() was called.
  bool spin_for_task(Job* j);
  Status execute(const Job& j);
  void reply(int src, uint64_t seq, const Status& s);

  Transport& t_;
  DataMover& mover_;
  BufferTable& own_;
  NodeWorker& node_;
  RankServerConfig cfg_;

  std::mutex mu_;
  std::deque<Job> queue_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> queued_{0};
  std::thread thread_;
  Status poisoned_;  // executor thread only
};

}  // namespace taskring::net
