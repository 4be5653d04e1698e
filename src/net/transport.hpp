// Transport: the one thread per rank that makes MPI calls (after init).
//
// MPI is initialised with MPI_THREAD_SERIALIZED: the main thread calls
// MPI_Init_thread before the progress thread starts and MPI_Finalize after
// it stopped; in between only the progress thread calls MPI. Other threads
// hand it work with post() (a closure run on the progress thread).
//
// Each pass: run posted closures, receive every control message that has
// arrived (MPI_Improbe + MPI_Mrecv, any source) and hand it to the handler,
// complete finished sends and receives (MPI_Testsome), send heartbeats and
// check peers, and runs the pollers (add_poller: the request rings of comm
// domains spanning nodes, domain_service.hpp). MPI has no descriptor or futex to park on until a message
// arrives, so the thread polls: after any event it keeps polling for the
// poll window (NetConfig::poll_window_us; a reply usually follows within
// microseconds: the next task, the steps of a transfer), then parks on its
// waiter (woken at once by post()). While a reply is expected (expect(): a
// task in flight on rank 0, a transfer or control call waiting) it parks in
// kBusySliceNs slices; otherwise the slice starts at kMinSliceNs and doubles
// up to kMaxSliceNs while nothing happens. The slice bounds how late a
// message is noticed after a quiet spell; the doubling keeps an idle rank's
// CPU use near zero on a 2-core machine; no thread polls longer than the
// window without an event.
//
// Liveness: every message from a peer counts as a sign of life; heartbeats
// go out every heartbeat_ns. A watched peer silent for peer_timeout_ns is
// reported once to on_lost (on the progress thread).
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "taskring/base/status.hpp"
#include "taskring/base/waiter.hpp"
#include "wire.hpp"

namespace taskring::net {

class Transport {
 public:
  using Handler = std::function<void(int src, Msg type, Reader& r)>;
  using LostFn = std::function<void(int rank, uint64_t silent_ms)>;
  using Done = std::function<void(Status)>;

  static constexpr uint64_t kMinSliceNs = 20'000;
  static constexpr uint64_t kBusySliceNs = 50'000;
  static constexpr uint64_t kMaxSliceNs = 1'000'000;

  Transport(MPI_Comm comm, int rank, int size, Handler handler, uint64_t poll_window_ns);
  ~Transport();

  void start();
  // Lets pending message sends finish (up to `drain_ms`), joins the thread,
  // then cancels what is left (requests to a lost peer) and fails their
  // callbacks.
  void stop(uint64_t drain_ms = 1000);

  // Any thread: runs `fn` on the progress thread.
  void post(std::function<void()> fn);
  // Any thread: +1 when a reply is awaited, -1 when it came (or never will).
  void expect(int delta) { expecting_.fetch_add(delta, std::memory_order_relaxed); }

  // Progress thread only.
  void send(int dst, std::vector<char> msg);
  // Bulk data on `tag`, split into chunks of at most kChunk bytes (one
  // request each, matched in order). `done` once every chunk completed.
  void send_data(int dst, int tag, const void* p, uint64_t n, Done done);
  void recv_data(int src, int tag, void* p, uint64_t n, Done done);
  int next_tag();

  // Liveness: start watching `peers` (after the startup handshake).
  void watch(std::vector<int> peers, uint64_t heartbeat_ns, uint64_t peer_timeout_ns, LostFn on_lost);
  // Before start(): `fn` runs on every pass of the progress thread; true
  // when it did something (counts as an event, like a message).
  void add_poller(std::function<bool()> fn) { pollers_.push_back(std::move(fn)); }
  // Runs `fn` on the progress thread once `at_mono_ns` passed (one timer).
  void at(uint64_t at_mono_ns, std::function<void()> fn);

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return comm_; }

 private:
  static constexpr uint64_t kChunk = 256ull << 20;
  struct Pending {
    std::shared_ptr<std::vector<char>> keep;  // a send buffer
    std::shared_ptr<int> chunks_left;
    std::shared_ptr<Done> done;
  };
  // One request per chunk of at most kChunk bytes; `done` after the last.
  void chunks(bool send, int peer, int tag, void* p, uint64_t n, Done done);
  void loop();
  bool run_posted();
  bool receive();
  bool complete();
  bool timers();

  MPI_Comm comm_;
  int rank_, size_;
  Handler handler_;

  std::mutex mu_;
  std::deque<std::function<void()>> posted_;
  std::atomic<bool> has_posted_{false};
  std::atomic<int> expecting_{0};
  uint64_t poll_window_ns_;
  std::atomic<bool> stop_{false};
  uint64_t drain_until_ = 0;  // written before stop_ is set
  Waiter wake_;
  std::thread thread_;

  std::vector<MPI_Request> reqs_;
  std::vector<Pending> pending_;
  int tag_ = 0;

  std::vector<int> peers_;
  std::vector<uint64_t> last_heard_;
  std::vector<bool> lost_;
  uint64_t heartbeat_ns_ = 0, peer_timeout_ns_ = 0, next_beat_ = 0;
  LostFn on_lost_;
  uint64_t timer_at_ = 0;
  std::function<void()> timer_;
  std::vector<std::function<bool()>> pollers_;  // add_poller
};

}  // namespace taskring::net
