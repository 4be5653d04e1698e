// Transport: the one thread per rank that makes MPI calls (after init).
//
// MPI is initialised with MPI_THREAD_MULTIPLE where the library provides it
// (else MPI_THREAD_SERIALIZED): the main thread calls MPI_Init_thread,
// open_doorbells() and close_doorbells() while the progress thread is not
// running; in between the progress thread makes every MPI call except the
// control messages other threads send with send_any(). Under
// MPI_THREAD_MULTIPLE send_any() calls MPI_Isend on the caller's thread (the
// engine's scheduler sends a TASK, a rank's executor its COMPLETION) and
// rings the destination: no hop through the progress thread. Otherwise, and
// for everything else, other threads hand the progress thread work with
// post() (a closure run on it).
//
// Each pass: run posted closures, run the pollers (add_poller: the request
// rings of comm domains spanning nodes, domain_service.hpp), receive every
// control message that has arrived (MPI_Improbe + MPI_Mrecv, any source) and
// hand it to the handler, complete finished sends and receives
// (MPI_Testsome), send heartbeats and check peers.
//
// Waking without polling. MPI has no descriptor or futex to sleep on until a
// message arrives, so the ranks ring each other: open_doorbells() gives every
// rank a doorbell (a node::ShmBell) in an MPI shared-memory window over the
// ranks of its host (MPI_Comm_split_type + MPI_Win_allocate_shared: MPI owns
// the memory and removes it, also after a crash). send() rings the
// destination's doorbell after MPI_Isend; post() rings this rank's own. The
// idle thread parks on its doorbell (a shared futex) until a ring or its next
// timer (heartbeat, peer check, at()), so an idle rank costs no CPU and a
// message wakes its receiver at once. Before parking it announces the park,
// reads the epoch, and probes MPI once more, so a message whose ring came
// before the epoch read is received, and a later ring changes the epoch (the
// futex returns at once): no ring is lost.
//
// The thread does not park while it has MPI requests in flight (a transfer's
// data, a large message): Open MPI moves fragments of a large message only
// when both sides call into it. It then keeps polling, yielding the core
// between passes (sched_yield), until they complete or kInFlightSpinNs passes
// without an event (a descheduled or lost peer: then kBusySliceNs slices,
// since MPI's internal steps ring no doorbell); transfers are bounded by
// their callers' deadlines and by the peer check. After any event it polls
// for the poll window (NetConfig::poll_window_us; the next message of a
// conversation usually follows within microseconds) before parking.
//
// A peer on another host has no doorbell here (MPI offers no cross-host
// wake-up): when some peer lacks one, the idle thread parks in bounded slices
// instead (kBusySliceNs while expect() says a reply is awaited, else
// doubling from kMinSliceNs to kMaxSliceNs), the one place a slice bounds how
// late a message is noticed.
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

#include "node/shm_bell.hpp"
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
  // The longest park even with doorbells: a bound, not a poll (every event
  // rings); a lost ring would cost at most this.
  static constexpr uint64_t kMaxParkNs = 1'000'000'000;
  // The longest park after one that overlapped another thread's MPI call
  // (OtherThreadCall): what a message such a call held back may wait.
  static constexpr uint64_t kMaxOverlapSliceNs = 1'000'000;
  // How long the thread yield-polls requests in flight without progress
  // before it parks in kBusySliceNs slices.
  static constexpr uint64_t kInFlightSpinNs = 20'000'000;
  // Bulk data goes in MPI messages of at most this many bytes (MPI counts are int).
  static constexpr uint64_t kChunk = 256ull << 20;

  Transport(MPI_Comm comm, int rank, int size, Handler handler, uint64_t poll_window_ns);
  ~Transport();

  // Main thread, every rank, before start() (collective over the
  // communicator): the doorbells of this host's ranks. Without MPI shared
  // windows (an error) the ranks fall back to sliced parking.
  void open_doorbells();
  // Main thread, every rank, after stop() (collective): frees the window.
  void close_doorbells();
  // Whether `peer`'s doorbell is reachable (same host, window up).
  bool has_doorbell(int peer) const;
  // How many ranks share this host (open_doorbells(); 1 before or without it).
  int host_ranks() const { return host_ranks_; }

  void start();
  // Lets pending message sends finish (up to `drain_ms`), joins the thread,
  // then cancels what is left (requests to a lost peer) and fails their
  // callbacks.
  void stop(uint64_t drain_ms = 1000);
  // After stop(): how many MPI requests it found still in flight (tests).
  size_t left_at_stop() const { return left_at_stop_; }

  // Any thread: runs `fn` on the progress thread.
  void post(std::function<void()> fn);
  // Any thread: wakes the progress thread for a pass (e.g. a poller has work).
  void wake();
  // Before start(): `poll` runs on the progress thread every pass and returns
  // whether it did work (then the thread keeps polling for the poll window).
  // For work that arrives outside MPI (a shared-memory ring); its producer
  // calls wake() or the thread sees it at the next pass.
  void add_poller(std::function<bool()> poll);
  // Any thread: +1 when a reply is awaited, -1 when it came (or never will).
  void expect(int delta) { expecting_.fetch_add(delta, std::memory_order_relaxed); }
  // A futex doorbell outside MPI that also wakes the idle thread: `epoch`
  // changes on every ring, `parked` counts the sleepers (the ShmBell /
  // CommBell protocol: the ringer bumps epoch, then wakes if parked > 0).
  struct WakeBell {
    std::atomic<uint32_t>* epoch;
    std::atomic<uint32_t>* parked;
  };
  // Before start(): `fn` runs on the progress thread before each park and
  // appends the bells whose ring must end it (a comm domain's header bell,
  // rung when a chip child queues a request for another node). The thread
  // parks on its own doorbell and those at once (futex_waitv); where the
  // kernel lacks it, or past kSharedFutexWaitMax bells, it parks in
  // kBusySliceNs slices instead while any bell is listed.
  void add_wake_source(std::function<void(std::vector<WakeBell>&)> fn) { wake_sources_.push_back(std::move(fn)); }

  // Who a message is for on its destination rank. kProgress: the progress
  // thread's handler (tag kTagMsg). kExecutor / kEngine: the rank's task
  // executor (a TASK) / rank 0's engine scheduler (a COMPLETION), which
  // receive it themselves with take() after their doorbell rang; used only
  // where direct() holds, else the message goes to kProgress.
  enum class Channel { kProgress = 0, kExecutor = 1, kEngine = 2 };
  static constexpr int kChannels = 3;

  // Whether messages to `peer` may use the kExecutor / kEngine channels:
  // MPI_THREAD_MULTIPLE and the peer's doorbells are reachable.
  bool direct(int peer) const { return multiple_ && has_doorbell(peer); }
  // This rank's doorbell of `ch`: the executor and the engine park on theirs.
  node::ShmBell* doorbell(Channel ch) { return bell_[static_cast<int>(ch)]; }

  // Any thread: a message to `dst` on `ch` (kProgress unless direct(dst);
  // see the header comment). A send that MPI did not complete at once (a
  // large message) is handed to the progress thread, which completes it.
  void send_any(int dst, std::vector<char> msg, Channel ch = Channel::kProgress);
  // Any thread, direct channels only: receives one message that arrived on
  // `ch` from `src` (MPI_ANY_SOURCE: any); false when none is there. Probes
  // twice by default, as a waiter must before it parks (see the .cpp); a
  // spinning waiter that probes again at once passes 1.
  bool take(int src, Channel ch, std::vector<char>* msg, int* from, int probes = 2);
  // Any thread but the progress thread, around each of its MPI calls (take()
  // and send_any() hold one themselves). Why: Open MPI lets one thread's
  // progress pull a message off the wire that another thread's probe then
  // misses while the first has not queued it yet (under mpirun the two may
  // share a core, and the first be preempted right there). The progress
  // thread's last probes before a park can so miss a message whose ring
  // came first, and it slept for kMaxParkNs (a PUT or FETCH request right
  // after a task on its owner stalled 1 s in 1-3 of 10 bench_net --quick
  // runs). A park whose last probes overlapped such a call is cut to
  // kBusySliceNs, doubling up to kMaxOverlapSliceNs while each next one
  // overlaps too and finds nothing.
  class OtherThreadCall {
   public:
    explicit OtherThreadCall(Transport& t) : t_(t) {
      t_.other_calls_.fetch_add(1, std::memory_order_seq_cst);
      t_.other_in_.fetch_add(1, std::memory_order_seq_cst);
    }
    ~OtherThreadCall() { t_.other_in_.fetch_sub(1, std::memory_order_seq_cst); }
    OtherThreadCall(const OtherThreadCall&) = delete;
    OtherThreadCall& operator=(const OtherThreadCall&) = delete;

   private:
    Transport& t_;
  };

  // Before start(): whether send_any() may call MPI on the caller's thread
  // (MPI_THREAD_MULTIPLE was provided).
  void set_multiple(bool on) { multiple_ = on; }
  bool multiple() const { return multiple_; }

  // Progress thread only.
  void send(int dst, std::vector<char> msg);
  // Bulk data on `tag`, split into chunks of at most kChunk bytes (one
  // request each, matched in order). `done` once every chunk completed.
  // `ring_peer` false: the receiver drives its own requests (a direct
  // FETCH, data_mover.hpp), so its progress thread is not woken for them.
  void send_data(int dst, int tag, const void* p, uint64_t n, Done done, bool ring_peer = true);
  void recv_data(int src, int tag, void* p, uint64_t n, Done done);
  // A message to `dst` on `tag` instead of kTagMsg (the reply to a direct
  // transfer, which its requester receives itself): no ring.
  void send_on(int dst, int tag, std::vector<char> msg);
  // Cancels the receives posted on `tag` (a transfer the peer refused);
  // their `done` is not called.
  void cancel_recv(int tag);
  // Any thread: a fresh data tag.
  int next_tag();

  // Liveness: start watching `peers` (after the startup handshake).
  void watch(std::vector<int> peers, uint64_t heartbeat_ns, uint64_t peer_timeout_ns, LostFn on_lost);
  // Runs `fn` on the progress thread once `at_mono_ns` passed (one timer).
  void at(uint64_t at_mono_ns, std::function<void()> fn);

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return comm_; }

 private:
  struct Pending {
    std::shared_ptr<std::vector<char>> keep;  // a send buffer
    std::shared_ptr<int> chunks_left;
    std::shared_ptr<Done> done;
    int tag = -1;  // of a receive (cancel_recv); -1: a send
  };
  // One request per chunk of at most kChunk bytes; `done` after the last.
  void chunks(bool send, int peer, int tag, void* p, uint64_t n, Done done, bool ring_peer = true);
  void loop();
  bool run_posted();
  bool receive();
  bool receive_tag(int tag);
  bool complete();
  // While requests are in flight: lean passes (complete them, probe for a
  // control message, yield) for up to kLeanNs, back to the full pass at once
  // when a control message or posted work arrives. True when a request
  // completed. Why: the full pass (its probes of every channel, the pollers)
  // between fragments made a 1 MiB PUT's receive 4-5x slower than MPI's own
  // (docs/l4.md, "PUT and FETCH").
  bool drive_in_flight();
  static constexpr uint64_t kLeanNs = 200'000;
  bool timers();
  bool pollers();
  void compact();
  // The next time timers() has something to do.
  uint64_t next_timer_ns() const;
  void ring(int peer, Channel ch = Channel::kProgress);
  // Parks until a ring, the next timer, or (a peer without a doorbell) `slice_ns`.
  void park(uint64_t slice_ns);

  MPI_Comm comm_;
  int rank_, size_;
  Handler handler_;

  std::mutex mu_;
  std::deque<std::function<void()>> posted_;
  std::atomic<bool> has_posted_{false};
  std::atomic<int> expecting_{0};
  // OtherThreadCall: calls begun, calls in progress.
  std::atomic<uint64_t> other_calls_{0};
  std::atomic<uint32_t> other_in_{0};
  std::vector<std::function<void(std::vector<WakeBell>&)>> wake_sources_;
  std::vector<WakeBell> wake_bells_;       // progress thread: park()'s scratch
  uint64_t overlap_slice_ = kBusySliceNs;  // progress thread: park()
  uint64_t poll_window_ns_;
  std::atomic<bool> stop_{false};
  uint64_t drain_until_ = 0;  // written before stop_ is set
  // This rank's doorbells, by channel: in the window when it is up, else
  // own_bells_.
  node::ShmBell own_bells_[kChannels];
  node::ShmBell* bell_[kChannels] = {&own_bells_[0], &own_bells_[1], &own_bells_[2]};
  std::vector<node::ShmBell*> bells_;  // by rank, kChannels each; null: no doorbell
  bool all_bells_ = false;             // every peer has one
  int host_ranks_ = 1;
  MPI_Comm local_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  std::vector<std::function<bool()>> pollers_;
  bool multiple_ = false;
  size_t left_at_stop_ = 0;
  std::thread thread_;

  std::vector<MPI_Request> reqs_;
  std::vector<Pending> pending_;
  std::atomic<uint32_t> tag_{0};

  std::vector<int> peers_;
  std::vector<uint64_t> last_heard_;
  std::vector<bool> lost_;
  uint64_t heartbeat_ns_ = 0, peer_timeout_ns_ = 0, next_beat_ = 0;
  LostFn on_lost_;
  uint64_t timer_at_ = 0;
  std::function<void()> timer_;
};

}  // namespace taskring::net
