// The kernel side of requests to off-node peers (comm_remote.hpp) in one
// process: rank 0's request ring in ordinary memory, a thread standing in
// for the node's progress thread (it drains the ring in the documented
// format). Covers order across wrap-arounds (pad entries), puts split to
// the ring, a full ring that waits for the drain, its deadline and abort
// (errors naming the domain and ranks), and get from an off-node rank.
// The real consumer and MPI: tests/net/net_domain_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "taskring/kernels/comm_remote.hpp"

namespace taskring::kernels {
namespace {

namespace cm = comm;

// Two ranks, rank 1 off-node; rank 0's ring is `ring_bytes`.
class SplitDomain {
 public:
  SplitDomain(uint64_t ring_bytes, uint64_t timeout_ms) : layout_(cm::DomainLayout::make(2, 1 << 16, ring_bytes)) {
    mem_.reset(static_cast<char*>(std::aligned_alloc(4096, layout_.total)));
    std::memset(mem_.get(), 0, layout_.total);
    auto* h = reinterpret_cast<cm::DomainHeader*>(mem_.get());
    h->magic = cm::kHeaderMagic;
    h->nranks = 2;
    h->window_size = layout_.window_size;
    h->offnode_mask = 2;
    h->ring_bytes = layout_.ring_bytes;
    std::strcpy(h->name, "split");
    cm::fill_context(ctx(), mem_.get(), layout_, 0, timeout_ms * 1'000'000);
    ring()->capacity = cm::RemoteRing::capacity_for(layout_.ring_bytes);
    ctx()->offnode = 2;
    ctx()->ring = reinterpret_cast<uintptr_t>(ring());
  }
  cm::CommContext* ctx() { return reinterpret_cast<cm::CommContext*>(mem_.get() + layout_.context(0)); }
  cm::RemoteRing* ring() { return reinterpret_cast<cm::RemoteRing*>(mem_.get() + layout_.ring(0)); }
  cm::DomainHeader* header() { return reinterpret_cast<cm::DomainHeader*>(mem_.get()); }

  struct Req {
    cm::RemoteReq q;
    std::vector<char> payload;
  };
  // What the progress thread does: every complete entry, in order; then the
  // tail and rank 0's doorbell.
  std::vector<Req> drain() {
    std::vector<Req> out;
    cm::RemoteRing& r = *ring();
    const uint64_t head = r.head.load(std::memory_order_acquire);
    uint64_t t = r.tail.load(std::memory_order_relaxed);
    while (t < head) {
      Req e;
      std::memcpy(&e.q, r.data + t % r.capacity, sizeof(e.q));
      const auto op = static_cast<cm::RemoteOp>(e.q.op);
      if (op == cm::RemoteOp::kPad) {
        t += sizeof(e.q) + e.q.len;
        continue;
      }
      const uint64_t len = op == cm::RemoteOp::kPut ? e.q.len : 0;
      const char* p = r.data + t % r.capacity + sizeof(e.q);
      e.payload.assign(p, p + len);
      t += cm::remote_entry_bytes(len);
      out.push_back(std::move(e));
    }
    r.tail.store(t, std::memory_order_release);
    cm::ring(cm::sync_of(*ctx(), 0).bell);
    return out;
  }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  cm::DomainLayout layout_;
  std::unique_ptr<char, Free> mem_;
};

struct Args {
  KernelLocalContext lc{};
  int64_t raw[TASKRING_KERNEL_ARG_SLOTS] = {};
  Args() { raw[TASKRING_KERNEL_ARG_LOCAL_CONTEXT] = reinterpret_cast<intptr_t>(&lc); }
};

TEST(CommRemote, RequestsArriveInOrderAcrossWrapsAndPutsAreSplit) {
  SplitDomain d(8192, 10000);  // 8000 B of ring: wraps many times, puts split at 1968 B
  Args a;
  KernelArgs k(a.raw, "remote");
  const cm::CommContext& c = *d.ctx();
  std::atomic<bool> done{false};
  std::vector<SplitDomain::Req> got;
  std::thread progress([&] {
    while (!done.load()) {
      auto v = d.drain();
      got.insert(got.end(), v.begin(), v.end());
      std::this_thread::yield();
    }
    auto v = d.drain();
    got.insert(got.end(), v.begin(), v.end());
  });
  // Expected stream: per i, a put of (i * 37) % 5000 + 1 bytes at offset
  // i * 8 (split in <= 1968 B pieces), then a flag i and every 7th a notify.
  std::vector<char> src(5000);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 13 + 1);
  uint64_t want_bytes = 0, want_puts = 0;
  for (uint32_t i = 0; i < 300; ++i) {
    const uint64_t n = (i * 37) % 5000 + 1;
    ASSERT_TRUE(cm::put(k, c, 1, i * 8, src.data(), n)) << a.lc.error_message;
    want_bytes += n;
    want_puts += (n + 1967) / 1968;
    cm::post_flag(c, 1, i);
    if (i % 7 == 0) {
      ASSERT_TRUE(cm::notify(k, c, 1, 4 * i, cm::NotifyOp::kAdd, i)) << a.lc.error_message;
    }
  }
  ASSERT_TRUE(cm::remote_sync(k, c, 1, cm::RemoteOp::kBarrier, 1));  // what barrier() sends an off-node rank
  done.store(true);
  progress.join();
  // Replay: puts reassemble, flags follow their put, in order.
  uint64_t got_bytes = 0, got_puts = 0, next_off = 0;
  uint32_t flags = 0, notifies = 0;
  bool barrier_seen = false;
  std::vector<char> piece;
  for (const auto& e : got) {
    EXPECT_EQ(e.q.peer, 1);
    switch (static_cast<cm::RemoteOp>(e.q.op)) {
      case cm::RemoteOp::kPut:
        if (e.q.off != next_off) piece.clear();  // a new put starts at i * 8
        EXPECT_LE(e.q.len, 1968u);
        EXPECT_EQ(std::memcmp(e.payload.data(), src.data() + piece.size(), e.q.len), 0) << "put at " << e.q.off;
        piece.insert(piece.end(), e.payload.begin(), e.payload.end());
        next_off = e.q.off + e.q.len;
        got_bytes += e.q.len;
        ++got_puts;
        break;
      case cm::RemoteOp::kFlag:
        EXPECT_EQ(e.q.value, flags) << "flags in order";
        EXPECT_EQ(piece.size(), (flags * 37) % 5000 + 1) << "flag " << flags << " after its whole put";
        ++flags;
        break;
      case cm::RemoteOp::kNotify:
        EXPECT_EQ(e.q.off, 4u * (flags - 1));
        EXPECT_EQ(e.q.value, (uint64_t{1} << 32) | (flags - 1));
        ++notifies;
        break;
      case cm::RemoteOp::kBarrier:
        barrier_seen = true;
        EXPECT_EQ(e.q.value, 1u);
        break;
      default: ADD_FAILURE() << "op " << e.q.op;
    }
  }
  EXPECT_EQ(flags, 300u);
  EXPECT_EQ(notifies, 43u);
  EXPECT_TRUE(barrier_seen);
  EXPECT_EQ(got_bytes, want_bytes);
  EXPECT_EQ(got_puts, want_puts);
}

TEST(CommRemote, FullRingWaitsThenItsDeadlineNamesTheDomainAndRanks) {
  SplitDomain d(8192, 300);
  Args a;
  KernelArgs k(a.raw, "remote");
  std::vector<char> buf(1000);
  bool ok = true;
  int puts = 0;
  while (ok && puts < 100) {  // nobody drains: fills after ~7 puts
    ok = cm::put(k, *d.ctx(), 1, 0, buf.data(), buf.size());
    ++puts;
  }
  EXPECT_FALSE(ok);
  EXPECT_LT(puts, 10);
  EXPECT_EQ(a.lc.error_code, TASKRING_KERNEL_ERR_DEADLINE);
  const std::string msg = a.lc.error_message;
  EXPECT_NE(msg.find("domain 'split' rank 0: put to off-node rank 1: request ring: full, deadline of 300 ms"),
            std::string::npos)
      << msg;
}

TEST(CommRemote, FullRingResumesWhenDrainedAndEndsAtOnceOnAbort) {
  SplitDomain d(8192, 60000);
  Args a;
  KernelArgs k(a.raw, "remote");
  std::vector<char> buf(1000);
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(cm::put(k, *d.ctx(), 1, 0, buf.data(), buf.size()));
  // The next put needs room: a drain on another thread makes it.
  std::thread drainer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    (void)d.drain();
  });
  EXPECT_TRUE(cm::put(k, *d.ctx(), 1, 0, buf.data(), buf.size())) << a.lc.error_message;
  drainer.join();
  for (int i = 0; i < 6; ++i) (void)cm::put(k, *d.ctx(), 1, 0, buf.data(), buf.size());
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    d.header()->abort.store(1);
    cm::ring(cm::sync_of(*d.ctx(), 0).bell);
  });
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(cm::put(k, *d.ctx(), 1, 0, buf.data(), buf.size()));
  aborter.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_NE(std::string(a.lc.error_message).find("aborted"), std::string::npos) << a.lc.error_message;
}

TEST(CommRemote, GetFromAnOffNodeRankIsRefused) {
  SplitDomain d(8192, 1000);
  Args a;
  KernelArgs k(a.raw, "remote");
  char buf[16];
  EXPECT_FALSE(cm::get(k, *d.ctx(), 1, buf, 0, sizeof(buf)));
  EXPECT_EQ(a.lc.error_code, TASKRING_KERNEL_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(a.lc.error_message).find("domain 'split' rank 0: get from rank 1, which is on another node"),
            std::string::npos)
      << a.lc.error_message;
  // Its own window stays local.
  EXPECT_TRUE(cm::get(k, *d.ctx(), 0, buf, 0, sizeof(buf)));
}

}  // namespace
}  // namespace taskring::kernels
