#include "transport.hpp"

#include "taskring/base/shared_futex.hpp"

#include <sched.h>

#include <algorithm>
#include <new>

#include "taskring/base/clock.hpp"

namespace taskring::net {

Transport::Transport(MPI_Comm comm, int rank, int size, Handler handler, uint64_t poll_window_ns)
    : comm_(comm),
      rank_(rank),
      size_(size),
      handler_(std::move(handler)),
      poll_window_ns_(poll_window_ns),
      last_heard_(size, 0),
      lost_(size, false) {}

Transport::~Transport() { stop(); }

namespace {

constexpr uintptr_t kBellAlign = alignof(node::ShmBell);
static_assert(kBellAlign <= 4096 && 4096 % kBellAlign == 0);

// The first bell of a rank's doorbell slice that starts at `slice`.
node::ShmBell* bells_at(void* slice) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(slice);
  return reinterpret_cast<node::ShmBell*>((a + kBellAlign - 1) & ~(kBellAlign - 1));
}

}  // namespace

void Transport::open_doorbells() {
  bells_.assign(static_cast<size_t>(size_), nullptr);
  bells_[static_cast<size_t>(rank_)] = bell_[0];
  if (MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local_) != MPI_SUCCESS) return;
  MPI_Comm_set_errhandler(local_, MPI_ERRORS_RETURN);
  int local_size = 0;
  MPI_Comm_size(local_, &local_size);
  host_ranks_ = std::max(local_size, 1);
  void* mine = nullptr;
  // MPI places each rank's slice at no particular alignment (UBSan caught
  // 8-aligned slices); a bell needs 64. The slack lets every rank align its
  // slice up: the same shift in every process, since a shared segment keeps
  // its offset within a page (64 divides the page size) wherever it is mapped.
  if (MPI_Win_allocate_shared(sizeof(node::ShmBell) * kChannels + kBellAlign, 1, MPI_INFO_NULL, local_, &mine, &win_) !=
      MPI_SUCCESS) {
    win_ = MPI_WIN_NULL;
    return;
  }
  for (int c = 0; c < kChannels; ++c) bell_[c] = new (bells_at(mine) + c) node::ShmBell();
  // Every rank initialised its bells before anyone rings one.
  MPI_Barrier(local_);
  MPI_Group lg, wg;
  MPI_Comm_group(local_, &lg);
  MPI_Comm_group(comm_, &wg);
  for (int l = 0; l < local_size; ++l) {
    MPI_Aint bytes = 0;
    int disp = 0;
    void* at = nullptr;
    int world = MPI_UNDEFINED;
    if (MPI_Win_shared_query(win_, l, &bytes, &disp, &at) != MPI_SUCCESS || at == nullptr) continue;
    MPI_Group_translate_ranks(lg, 1, &l, wg, &world);
    if (world >= 0 && world < size_) bells_[static_cast<size_t>(world)] = bells_at(at);
  }
  MPI_Group_free(&lg);
  MPI_Group_free(&wg);
  all_bells_ = std::all_of(bells_.begin(), bells_.end(), [](node::ShmBell* b) { return b != nullptr; });
}

void Transport::close_doorbells() {
  bells_.assign(bells_.size(), nullptr);
  all_bells_ = false;
  host_ranks_ = 1;
  for (int c = 0; c < kChannels; ++c) bell_[c] = &own_bells_[c];
  if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);
  if (local_ != MPI_COMM_NULL) MPI_Comm_free(&local_);
}

bool Transport::has_doorbell(int peer) const {
  return peer >= 0 && static_cast<size_t>(peer) < bells_.size() && bells_[static_cast<size_t>(peer)] != nullptr;
}

void Transport::ring(int peer, Channel ch) {
  if (has_doorbell(peer)) node::bell_ring(bells_[static_cast<size_t>(peer)][static_cast<int>(ch)]);
}

void Transport::wake() { node::bell_ring(*bell_[0]); }

void Transport::add_poller(std::function<bool()> poll) { pollers_.push_back(std::move(poll)); }

void Transport::start() {
  if (thread_.joinable()) return;
  stop_.store(false);
  thread_ = std::thread([this] { loop(); });
}

void Transport::stop(uint64_t drain_ms) {
  if (!thread_.joinable()) return;
  drain_until_ = mono_ns() + drain_ms * 1'000'000;
  stop_.store(true, std::memory_order_release);
  wake();
  thread_.join();
  // Cancel what never completed (a lost peer); MPI frees cancelled requests.
  left_at_stop_ = reqs_.size();
  for (MPI_Request& r : reqs_) {
    if (r == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&r);
    MPI_Request_free(&r);
  }
  for (Pending& p : pending_)
    if (p.done && *p.done) (*p.done)(aborted("the transport stopped before the transfer completed"));
  reqs_.clear();
  pending_.clear();
}

void Transport::post(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    posted_.push_back(std::move(fn));
    has_posted_.store(true, std::memory_order_release);
  }
  wake();
}

namespace {
int channel_tag(Transport::Channel ch) {
  switch (ch) {
    case Transport::Channel::kExecutor: return kTagTask;
    case Transport::Channel::kEngine: return kTagCompletion;
    case Transport::Channel::kProgress: break;
  }
  return kTagMsg;
}
}  // namespace

void Transport::send_any(int dst, std::vector<char> msg, Channel ch) {
  if (!direct(dst)) ch = Channel::kProgress;
  auto keep = std::make_shared<std::vector<char>>(std::move(msg));
  if (!multiple_) {
    post([this, dst, keep] { send(dst, std::move(*keep)); });
    return;
  }
  MPI_Request r;
  int done = 0;
  {
    OtherThreadCall call(*this);
    MPI_Isend(keep->data(), static_cast<int>(keep->size()), MPI_BYTE, dst, channel_tag(ch), comm_, &r);
    ring(dst, ch);
    MPI_Test(&r, &done, MPI_STATUS_IGNORE);  // a small (eager) message completes here
  }
  if (done) return;
  post([this, r, keep] {
    reqs_.push_back(r);
    pending_.push_back(Pending{keep, nullptr, nullptr});
  });
}

bool Transport::take(int src, Channel ch, std::vector<char>* msg, int* from, int probes) {
  if (!multiple_) return false;
  OtherThreadCall call(*this);
  int flag = 0;
  MPI_Message m;
  MPI_Status st;
  // Open MPI's MPI_Improbe matches, then progresses: a message that the
  // progress of a miss brought in is matched by the second call.
  for (int attempt = 0; attempt < probes && !flag; ++attempt) MPI_Improbe(src, channel_tag(ch), comm_, &flag, &m, &st);
  if (!flag) return false;
  int n = 0;
  MPI_Get_count(&st, MPI_BYTE, &n);
  msg->assign(static_cast<size_t>(std::max(n, 0)), 0);
  MPI_Mrecv(msg->data(), n, MPI_BYTE, &m, MPI_STATUS_IGNORE);
  *from = st.MPI_SOURCE;
  return true;
}

void Transport::send(int dst, std::vector<char> msg) {
  auto keep = std::make_shared<std::vector<char>>(std::move(msg));
  MPI_Request r;
  MPI_Isend(keep->data(), static_cast<int>(keep->size()), MPI_BYTE, dst, kTagMsg, comm_, &r);
  reqs_.push_back(r);
  pending_.push_back(Pending{keep, nullptr, nullptr});
  ring(dst);
}

void Transport::send_on(int dst, int tag, std::vector<char> msg) {
  auto keep = std::make_shared<std::vector<char>>(std::move(msg));
  MPI_Request r;
  MPI_Isend(keep->data(), static_cast<int>(keep->size()), MPI_BYTE, dst, tag, comm_, &r);
  reqs_.push_back(r);
  pending_.push_back(Pending{keep, nullptr, nullptr});
}

void Transport::send_data(int dst, int tag, const void* p, uint64_t n, Done done, bool ring_peer) {
  chunks(true, dst, tag, const_cast<void*>(p), n, std::move(done), ring_peer);
}

void Transport::recv_data(int src, int tag, void* p, uint64_t n, Done done) {
  chunks(false, src, tag, p, n, std::move(done));
}

void Transport::chunks(bool send, int peer, int tag, void* p, uint64_t n, Done done, bool ring_peer) {
  const uint64_t count = std::max<uint64_t>(1, (n + kChunk - 1) / kChunk);
  auto left = std::make_shared<int>(static_cast<int>(count));
  auto d = std::make_shared<Done>(std::move(done));
  for (uint64_t c = 0; c < count; ++c) {
    const uint64_t off = c * kChunk, len = std::min(kChunk, n - off);
    char* at = static_cast<char*>(p) + off;
    MPI_Request r;
    if (send)
      MPI_Isend(at, static_cast<int>(len), MPI_BYTE, peer, tag, comm_, &r);
    else
      MPI_Irecv(at, static_cast<int>(len), MPI_BYTE, peer, tag, comm_, &r);
    reqs_.push_back(r);
    pending_.push_back(Pending{nullptr, left, d, send ? -1 : tag});
  }
  if (send && ring_peer) ring(peer);
}

void Transport::cancel_recv(int tag) {
  for (size_t i = 0; i < reqs_.size(); ++i) {
    if (pending_[i].tag != tag || reqs_[i] == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&reqs_[i]);
    MPI_Request_free(&reqs_[i]);  // sets it to MPI_REQUEST_NULL
    pending_[i] = Pending{};
  }
  compact();
}

void Transport::compact() {
  size_t w = 0;
  for (size_t i = 0; i < reqs_.size(); ++i) {
    if (reqs_[i] == MPI_REQUEST_NULL) continue;
    reqs_[w] = reqs_[i];
    pending_[w] = std::move(pending_[i]);
    ++w;
  }
  reqs_.resize(w);
  pending_.resize(w);
}

int Transport::next_tag() {
  return kTagDataBase + static_cast<int>((tag_.fetch_add(1, std::memory_order_relaxed) + 1) % kReplyTagOffset);
}

void Transport::watch(std::vector<int> peers, uint64_t heartbeat_ns, uint64_t peer_timeout_ns, LostFn on_lost) {
  peers_ = std::move(peers);
  heartbeat_ns_ = heartbeat_ns;
  peer_timeout_ns_ = peer_timeout_ns;
  on_lost_ = std::move(on_lost);
  const uint64_t now = mono_ns();
  for (int p : peers_) last_heard_[static_cast<size_t>(p)] = now;
  next_beat_ = now;
}

void Transport::at(uint64_t at_mono_ns, std::function<void()> fn) {
  timer_at_ = at_mono_ns;
  timer_ = std::move(fn);
}

bool Transport::run_posted() {
  if (!has_posted_.load(std::memory_order_acquire)) return false;
  std::deque<std::function<void()>> q;
  {
    std::lock_guard<std::mutex> lk(mu_);
    q.swap(posted_);
    has_posted_.store(false, std::memory_order_relaxed);
  }
  for (auto& fn : q) fn();
  return !q.empty();
}

bool Transport::receive() {
  // The direct channels too: a message for the executor or the engine that
  // this thread's MPI progress brought in is then handed over here (the
  // handler queues it and rings), so theirs never waits for a ring that came
  // before the message was matchable.
  bool any = receive_tag(kTagMsg);
  if (multiple_) {
    any |= receive_tag(kTagTask);
    any |= receive_tag(kTagCompletion);
  }
  return any;
}

bool Transport::receive_tag(int tag) {
  bool any = false;
  while (true) {
    int flag = 0;
    MPI_Message m;
    MPI_Status st;
    MPI_Improbe(MPI_ANY_SOURCE, tag, comm_, &flag, &m, &st);
    if (!flag) return any;
    int n = 0;
    MPI_Get_count(&st, MPI_BYTE, &n);
    std::vector<char> buf(static_cast<size_t>(std::max(n, 0)));
    MPI_Mrecv(buf.data(), n, MPI_BYTE, &m, MPI_STATUS_IGNORE);
    any = true;
    const int src = st.MPI_SOURCE;
    last_heard_[static_cast<size_t>(src)] = mono_ns();
    Reader r(buf.data(), buf.size());
    Msg type;
    if (!r.header(&type) || buf.size() > kMaxMessageBytes) continue;  // not ours: dropped
    if (type == Msg::kHeartbeat) continue;
    handler_(src, type, r);
  }
}

bool Transport::complete() {
  if (reqs_.empty()) return false;
  int outcount = 0;
  std::vector<int> idx(reqs_.size());
  MPI_Testsome(static_cast<int>(reqs_.size()), reqs_.data(), &outcount, idx.data(), MPI_STATUSES_IGNORE);
  if (outcount <= 0 || outcount == MPI_UNDEFINED) return false;
  std::vector<std::shared_ptr<Done>> fire;
  for (int i = 0; i < outcount; ++i) {
    Pending& p = pending_[static_cast<size_t>(idx[static_cast<size_t>(i)])];
    if (p.chunks_left && --*p.chunks_left == 0 && p.done) fire.push_back(p.done);
    p = Pending{};
  }
  compact();  // drop completed (now MPI_REQUEST_NULL) entries
  for (auto& d : fire)
    if (*d) (*d)(Status::Ok());
  return true;
}

bool Transport::drive_in_flight() {
  const uint64_t until = mono_ns() + kLeanNs;
  do {
    if (complete()) return true;
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, kTagMsg, comm_, &flag, MPI_STATUS_IGNORE);
    if (flag || has_posted_.load(std::memory_order_acquire)) return false;
    sched_yield();
  } while (mono_ns() < until);
  return false;
}

bool Transport::pollers() {
  bool any = false;
  for (auto& p : pollers_) any |= p();
  return any;
}

uint64_t Transport::next_timer_ns() const {
  uint64_t at = UINT64_MAX;
  if (heartbeat_ns_ > 0) at = std::min(at, next_beat_);
  if (peer_timeout_ns_ > 0)
    for (int p : peers_)
      if (!lost_[static_cast<size_t>(p)]) at = std::min(at, last_heard_[static_cast<size_t>(p)] + peer_timeout_ns_);
  if (timer_) at = std::min(at, timer_at_);
  return at;
}

void Transport::park(uint64_t slice_ns) {
  node::ShmBell& b = *bell_[0];
  wake_bells_.clear();
  for (auto& source : wake_sources_) source(wake_bells_);
  const int n = 1 + static_cast<int>(wake_bells_.size());
  const bool waitv = n == 1 || (n <= kSharedFutexWaitMax && shared_futex_wait_either_available());
  std::atomic<uint32_t>* words[kSharedFutexWaitMax];
  uint32_t seen[kSharedFutexWaitMax];
  const int parked = waitv ? n : 1;
  words[0] = &b.epoch;
  b.parked.fetch_add(1, std::memory_order_seq_cst);
  for (int i = 1; i < parked; ++i) {
    wake_bells_[static_cast<size_t>(i - 1)].parked->fetch_add(1, std::memory_order_seq_cst);
    words[i] = wake_bells_[static_cast<size_t>(i - 1)].epoch;
  }
  for (int i = 0; i < parked; ++i) seen[i] = words[i]->load(std::memory_order_seq_cst);
  auto unpark = [&] {
    b.parked.fetch_sub(1, std::memory_order_relaxed);
    for (int i = 1; i < parked; ++i)
      wake_bells_[static_cast<size_t>(i - 1)].parked->fetch_sub(1, std::memory_order_relaxed);
  };
  // A message whose ring came before the epoch read is in MPI by now.
  // Twice: MPI_Improbe progresses after it matches (see take()). Work a
  // wake bell announced before its epoch was read is seen by the pollers.
  // Unless another thread's MPI call held it meanwhile (OtherThreadCall).
  const uint64_t calls = other_calls_.load(std::memory_order_seq_cst);
  const bool inside = other_in_.load(std::memory_order_seq_cst) > 0;
  if (has_posted_.load(std::memory_order_acquire) || stop_.load(std::memory_order_acquire) || receive() || receive() ||
      (n > 1 && pollers())) {
    unpark();
    return;
  }
  const bool overlapped =
      inside || other_in_.load(std::memory_order_seq_cst) > 0 || other_calls_.load(std::memory_order_seq_cst) != calls;
  const uint64_t now = mono_ns(), next = next_timer_ns();
  uint64_t ns = next > now ? next - now : 0;
  if (!all_bells_ || !reqs_.empty() || !waitv) ns = std::min(ns, slice_ns);
  if (overlapped) {
    // Doubling while the other threads keep calling (a transfer they
    // drive): each slice's end costs this thread a wake on their core.
    ns = std::min(ns, overlap_slice_);
    overlap_slice_ = std::min(overlap_slice_ * 2, kMaxOverlapSliceNs);
  }
  ns = std::min(ns, kMaxParkNs);
  if (ns > 0) shared_futex_wait_any(words, seen, parked, ns);
  unpark();
}

bool Transport::timers() {
  const uint64_t now = mono_ns();
  bool any = false;
  if (heartbeat_ns_ > 0 && now >= next_beat_) {
    next_beat_ = now + heartbeat_ns_;
    for (int p : peers_)
      if (!lost_[static_cast<size_t>(p)]) send(p, Writer(Msg::kHeartbeat).take());
    any = true;
  }
  if (peer_timeout_ns_ > 0) {
    for (int p : peers_) {
      const size_t i = static_cast<size_t>(p);
      if (lost_[i] || now - last_heard_[i] < peer_timeout_ns_) continue;
      lost_[i] = true;
      if (on_lost_) on_lost_(p, (now - last_heard_[i]) / 1'000'000);
      any = true;
    }
  }
  if (timer_ && now >= timer_at_) {
    auto fn = std::move(timer_);
    timer_ = nullptr;
    fn();
    any = true;
  }
  return any;
}

void Transport::loop() {
  uint64_t slice = kMinSliceNs;
  uint64_t last_event = mono_ns();
  auto sends_pending = [&] {
    for (const Pending& p : pending_)
      if (p.tag < 0) return true;  // a message or a data send
    return false;
  };
  // After stop(): posted work (a last WELCOME, BYE) still runs and message
  // sends still complete, until drain_until_.
  while (!stop_.load(std::memory_order_acquire) ||
         ((has_posted_.load(std::memory_order_acquire) || sends_pending()) && mono_ns() < drain_until_)) {
    // Lean passes only while the transfer moves; a request stuck past
    // kInFlightSpinNs (a descheduled or lost peer) is driven in park slices below.
    bool did = !reqs_.empty() && !stop_.load(std::memory_order_acquire) &&
               mono_ns() - last_event < kInFlightSpinNs && drive_in_flight();
    did |= run_posted();
    did |= pollers();
    did |= receive();
    did |= complete();
    did |= timers();
    if (did) {
      slice = kMinSliceNs;
      overlap_slice_ = kBusySliceNs;
      last_event = mono_ns();
      continue;
    }
    const bool stopping = stop_.load(std::memory_order_acquire);
    if (!stopping && mono_ns() - last_event < poll_window_ns_) {
      for (int i = 0; i < 64; ++i) Waiter::cpu_relax();
      continue;
    }
    if (!reqs_.empty() && !stopping && mono_ns() - last_event < kInFlightSpinNs) {
      // Data in flight: both sides must call into MPI until it completes.
      sched_yield();
      continue;
    }
    // A request stuck past kInFlightSpinNs (a descheduled or lost peer)
    // is driven in slices: its peer does not ring for MPI's internal steps.
    const bool expecting = expecting_.load(std::memory_order_relaxed) > 0 || stopping || !reqs_.empty();
    if (expecting) slice = kBusySliceNs;
    park(stopping ? std::min<uint64_t>(slice, drain_until_ > mono_ns() ? drain_until_ - mono_ns() : 0) : slice);
    if (!expecting) slice = std::min(slice * 2, kMaxSliceNs);
  }
}

}  // namespace taskring::net
