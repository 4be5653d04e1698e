// Remote descriptors without an MPI runtime: the key encoding, the buffer
// table (allocation, generations, range checks), the wire reader's bounds,
// and dependency inference over remote keys with the same DepMap the L3
// engine uses (RAW, WAW, WAR; overlapping ranges at different offsets).
#include <gtest/gtest.h>

#include <algorithm>

#include "buffer_table.hpp"
#include "dep_map.hpp"
#include "remote_key.hpp"
#include "wire.hpp"

namespace taskring::net {
namespace {

ChipTensor rt(int owner, uint32_t id, uint32_t gen, uint64_t off, uint64_t n, uint64_t buffer_bytes = 1024) {
  const uint32_t shape = static_cast<uint32_t>(n / 4);
  auto t = make_remote_tensor(RemoteTensor{owner, id, gen, off, n}, buffer_bytes, std::span<const uint32_t>(&shape, 1),
                              DataType::FLOAT32);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return *t;
}

TEST(RemoteKey, RoundTripsIdentityAndRange) {
  const ChipTensor t = rt(200, 16383, 255, 64, 128);
  ASSERT_TRUE(is_remote_key(t.buffer.addr));
  auto d = describe_remote(t);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->owner, 200);
  EXPECT_EQ(d->buffer_id, 16383u);
  EXPECT_EQ(d->generation, 255u);
  EXPECT_EQ(d->offset, 64u);
  EXPECT_EQ(d->nbytes, 128u);
  EXPECT_NE(remote_key(1, 2, 3), remote_key(1, 2, 4));
  EXPECT_NE(remote_key(1, 2, 3), remote_key(2, 2, 3));
  EXPECT_NE(remote_key(1, 2, 3), remote_key(1, 3, 3));
}

TEST(RemoteKey, RejectsHostPointersAndBadRanges) {
  float host[4] = {};
  const uint32_t shape = 4;
  ChipTensor h = make_tensor_external(host, &shape, 1, DataType::FLOAT32);
  auto d = describe_remote(h);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("not a remote tensor"), std::string::npos);
  auto past = make_remote_tensor(RemoteTensor{0, 1, 0, 1000, 64}, 1024, std::span<const uint32_t>(&shape, 1),
                                 DataType::FLOAT32);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().code(), StatusCode::kOutOfRange);
  auto odd =
      make_remote_tensor(RemoteTensor{0, 1, 0, 2, 16}, 1024, std::span<const uint32_t>(&shape, 1), DataType::FLOAT32);
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find("multiple of the element size"), std::string::npos);
  auto size =
      make_remote_tensor(RemoteTensor{0, 1, 0, 0, 20}, 1024, std::span<const uint32_t>(&shape, 1), DataType::FLOAT32);
  ASSERT_FALSE(size.ok());
  EXPECT_NE(size.status().message().find("shape covers"), std::string::npos);
}

TEST(BufferTable, AllocatesFreesAndBumpsGenerations) {
  BufferTable t(3, 4096);
  auto a = t.alloc(100);
  auto b = t.alloc(1000);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->offset % 64, 0u);
  EXPECT_GE(b->offset, a->offset + 100);
  EXPECT_FALSE(t.alloc(4096).ok());  // does not fit any more
  auto big = t.alloc(4096);
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(big.status().message().find("pool_bytes"), std::string::npos);
  ASSERT_TRUE(t.free(a->id, a->generation).ok());
  auto stale = t.lookup(a->id, a->generation);
  ASSERT_FALSE(stale.ok());
  EXPECT_NE(stale.status().message().find("freed"), std::string::npos);
  auto again = t.alloc(64);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->id, a->id);
  EXPECT_EQ(again->generation, a->generation + 1);
  auto old = t.check(RemoteTensor{3, a->id, a->generation, 0, 4});
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.status().message().find("generation"), std::string::npos);
  auto range = t.check(RemoteTensor{3, again->id, again->generation, 32, 64});
  ASSERT_FALSE(range.ok());
  EXPECT_EQ(range.status().code(), StatusCode::kOutOfRange);
  EXPECT_FALSE(t.lookup(999, 0).ok());
  // Freeing everything merges the free list back into one block.
  ASSERT_TRUE(t.free(b->id, b->generation).ok());
  ASSERT_TRUE(t.free(again->id, again->generation).ok());
  EXPECT_TRUE(t.alloc(4096).ok());
}

TEST(Wire, ReaderNeverReadsPastTheMessage) {
  Writer w(Msg::kTask);
  w.put(uint64_t{7}).str("hello");
  std::vector<char> m = w.take();
  Reader r(m.data(), m.size());
  Msg type;
  ASSERT_TRUE(r.header(&type));
  EXPECT_EQ(type, Msg::kTask);
  EXPECT_EQ(r.get<uint64_t>(), 7u);
  EXPECT_EQ(r.str(), "hello");
  EXPECT_TRUE(r.ok());
  (void)r.get<uint64_t>();
  EXPECT_FALSE(r.ok());
  Reader cut(m.data(), m.size() - 2);
  ASSERT_TRUE(cut.header(&type));
  (void)cut.get<uint64_t>();
  EXPECT_EQ(cut.str(), "");
  EXPECT_FALSE(cut.ok());
  const char junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  Reader bad(junk, sizeof(junk));
  EXPECT_FALSE(bad.header(&type));
  EXPECT_EQ(truncate_error(std::string(5000, 'x')).size(), kMaxErrorBytes);
  EXPECT_NE(truncate_error(std::string(5000, 'x')).find("[truncated]"), std::string::npos);
}

// The L3 DepMap over remote keys: the rules L4 relies on.
class RemoteDeps : public ::testing::Test {
 protected:
  std::vector<uint64_t> add(uint64_t index, std::vector<std::pair<ChipTensor, TensorArgType>> args) {
    std::vector<ChipTensor> ts;
    std::vector<TensorArgType> tags;
    for (auto& [t, tag] : args) {
      ts.push_back(t);
      tags.push_back(tag);
    }
    std::vector<uint64_t> p;
    deps.add_task(index, ts, tags, &p);
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
    return p;
  }
  node::DepMap deps;
};

TEST_F(RemoteDeps, OverlapStartingAtDifferentOffsetsIsOrdered) {
  deps.reset();
  EXPECT_TRUE(add(0, {{rt(1, 5, 0, 0, 24), TensorArgType::INOUT}}).empty());
  // [16, 32) overlaps [0, 24) in [16, 24): WAW (upstream's keys include the
  // offset and miss this).
  EXPECT_EQ(add(1, {{rt(1, 5, 0, 16, 16), TensorArgType::INOUT}}), (std::vector<uint64_t>{0}));
  // [24, 32) is disjoint from task 0, overlaps task 1.
  EXPECT_EQ(add(2, {{rt(1, 5, 0, 24, 8), TensorArgType::INPUT}}), (std::vector<uint64_t>{1}));
}

TEST_F(RemoteDeps, RawWawWarAcrossOwners) {
  deps.reset();
  const ChipTensor a = rt(1, 0, 0, 0, 64), b = rt(2, 0, 0, 0, 64);
  EXPECT_TRUE(add(0, {{a, TensorArgType::OUTPUT_EXISTING}}).empty());
  EXPECT_EQ(add(1, {{a, TensorArgType::INPUT}, {b, TensorArgType::OUTPUT_EXISTING}}),
            (std::vector<uint64_t>{0}));                                                    // RAW on a
  EXPECT_EQ(add(2, {{a, TensorArgType::OUTPUT_EXISTING}}), (std::vector<uint64_t>{0, 1}));  // WAW + WAR
  EXPECT_EQ(add(3, {{b, TensorArgType::INPUT}}), (std::vector<uint64_t>{1}));               // RAW on b only
}

TEST_F(RemoteDeps, DifferentBuffersOwnersAndGenerationsAreIndependent) {
  deps.reset();
  EXPECT_TRUE(add(0, {{rt(1, 3, 0, 0, 64), TensorArgType::INOUT}}).empty());
  EXPECT_TRUE(add(1, {{rt(2, 3, 0, 0, 64), TensorArgType::INOUT}}).empty());   // other owner
  EXPECT_TRUE(add(2, {{rt(1, 4, 0, 0, 64), TensorArgType::INOUT}}).empty());   // other id
  EXPECT_TRUE(add(3, {{rt(1, 3, 1, 0, 64), TensorArgType::INOUT}}).empty());   // other generation
  EXPECT_TRUE(add(4, {{rt(1, 3, 0, 0, 64), TensorArgType::NO_DEP}}).empty());  // untracked
  EXPECT_EQ(add(5, {{rt(1, 3, 0, 32, 32), TensorArgType::INPUT}}), (std::vector<uint64_t>{0}));
}

}  // namespace
}  // namespace taskring::net

// NetWorker's checks that run before any MPI call (no runtime needed).
namespace taskring::net {
namespace {

TEST(NetWorkerApi, RegisterTaskRejectsBadNamesAndDuplicates) {
  NetWorker w(NetConfig{});
  EXPECT_TRUE(w.register_task("a", [](NodeWorker&, const ChipTaskArgs&) { return Status::Ok(); }).ok());
  auto dup = w.register_task("a", [](NodeWorker&, const ChipTaskArgs&) { return Status::Ok(); });
  EXPECT_EQ(dup.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(w.register_task("", [](NodeWorker&, const ChipTaskArgs&) { return Status::Ok(); }).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(w.register_task("b", nullptr).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(w.close().ok());
}

TEST(NetWorkerApi, InitRejectsBadConfigNamingTheField) {
  auto bad = [](auto tweak, const std::string& field) {
    NetConfig c;
    tweak(c);
    NetWorker w(c);
    Status s = w.init();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << field << ": " << s.to_string();
    EXPECT_NE(s.message().find(field), std::string::npos) << s.to_string();
    EXPECT_FALSE(w.init().ok());  // once only
    EXPECT_TRUE(w.close().ok());
  };
  bad([](NetConfig& c) { c.peer_timeout_ms = 0; }, "peer_timeout_ms");
  bad([](NetConfig& c) { c.pool_bytes = 0; }, "pool_bytes");
  bad([](NetConfig& c) { c.poll_window_us = 2'000'000; }, "poll_window_us");
}

TEST(NetWorkerApi, EverythingElseNeedsARunningWorker) {
  NetWorker w(NetConfig{});
  EXPECT_EQ(w.remote_malloc(0, 64).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w.serve().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w.run([](Orchestrator&) { return Status::Ok(); }).code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(w.close().ok());
}

}  // namespace
}  // namespace taskring::net
