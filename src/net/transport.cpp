#include "transport.hpp"

#include <algorithm>

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

void Transport::start() {
  if (thread_.joinable()) return;
  stop_.store(false);
  thread_ = std::thread([this] { loop(); });
}

void Transport::stop(uint64_t drain_ms) {
  if (!thread_.joinable()) return;
  drain_until_ = mono_ns() + drain_ms * 1'000'000;
  stop_.store(true, std::memory_order_release);
  wake_.notify_all();
  thread_.join();
  // Cancel what never completed (a lost peer); MPI frees cancelled requests.
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
  wake_.notify_all();
}

void Transport::send(int dst, std::vector<char> msg) {
  auto keep = std::make_shared<std::vector<char>>(std::move(msg));
  MPI_Request r;
  MPI_Isend(keep->data(), static_cast<int>(keep->size()), MPI_BYTE, dst, kTagMsg, comm_, &r);
  reqs_.push_back(r);
  pending_.push_back(Pending{keep, nullptr, nullptr});
}

void Transport::send_data(int dst, int tag, const void* p, uint64_t n, Done done) {
  chunks(true, dst, tag, const_cast<void*>(p), n, std::move(done));
}

void Transport::recv_data(int src, int tag, void* p, uint64_t n, Done done) {
  chunks(false, src, tag, p, n, std::move(done));
}

void Transport::chunks(bool send, int peer, int tag, void* p, uint64_t n, Done done) {
  const uint64_t count = std::max<uint64_t>(1, (n + kChunk - 1) / kChunk);
  auto left = std::make_shared<int>(static_cast<int>(count));
  auto d = std::make_shared<Done>(std::move(done));
  for (uint64_t c = 0; c < count; ++c) {
    const uint64_t off = c * kChunk, len = std::min(kChunk, n - off);
    char* at = static_cast<char*>(p) + off;
    MPI_Request r;
    if (send) MPI_Isend(at, static_cast<int>(len), MPI_BYTE, peer, tag, comm_, &r);
    else MPI_Irecv(at, static_cast<int>(len), MPI_BYTE, peer, tag, comm_, &r);
    reqs_.push_back(r);
    pending_.push_back(Pending{nullptr, left, d});
  }
}

int Transport::next_tag() {
  tag_ = (tag_ + 1) % (1 << 24);
  return kTagDataBase + tag_;
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
  bool any = false;
  while (true) {
    int flag = 0;
    MPI_Message m;
    MPI_Status st;
    MPI_Improbe(MPI_ANY_SOURCE, kTagMsg, comm_, &flag, &m, &st);
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
  // Compact: drop completed (now MPI_REQUEST_NULL) entries.
  size_t w = 0;
  for (size_t i = 0; i < reqs_.size(); ++i) {
    if (reqs_[i] == MPI_REQUEST_NULL) continue;
    reqs_[w] = reqs_[i];
    pending_[w] = std::move(pending_[i]);
    ++w;
  }
  reqs_.resize(w);
  pending_.resize(w);
  for (auto& d : fire)
    if (*d) (*d)(Status::Ok());
  return true;
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
      if (p.keep) return true;
    return false;
  };
  // After stop(): posted work (a last WELCOME, BYE) still runs and message
  // sends still complete, until drain_until_.
  while (!stop_.load(std::memory_order_acquire) ||
         ((has_posted_.load(std::memory_order_acquire) || sends_pending()) && mono_ns() < drain_until_)) {
    bool did = run_posted();
    did |= receive();
    did |= complete();
    did |= timers();
    for (auto& p : pollers_) did |= p();
    if (did) {
      slice = kMinSliceNs;
      last_event = mono_ns();
      continue;
    }
    const bool stopping = stop_.load(std::memory_order_acquire);
    if (!stopping && mono_ns() - last_event < poll_window_ns_) {
      for (int i = 0; i < 64; ++i) Waiter::cpu_relax();
      continue;
    }
    const bool expecting = expecting_.load(std::memory_order_relaxed) > 0 || stopping;
    if (expecting) slice = kBusySliceNs;
    (void)wake_.wait([&] { return has_posted_.load(std::memory_order_acquire) || stop_.load(); },
                     Deadline::after_ns(slice), "transport idle slice", 64);
    if (!expecting) slice = std::min(slice * 2, kMaxSliceNs);
  }
}

}  // namespace taskring::net
