// The L4 wire messages without an MPI runtime: every message survives its
// encode/decode round trip field for field; a message cut anywhere short is
// an error naming it (never an overread); fields out of range are refused;
// and the launcher's rank variable is parsed and validated.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>

#include "launcher_rank.hpp"
#include "node/dag/engine.hpp"
#include "wire_messages.hpp"

namespace taskring::net {
namespace {

namespace cm = kernels::comm;

// The header of `bytes`, checked; the reader is left at the first field.
Reader open(const std::vector<char>& bytes, Msg want) {
  Reader r(bytes.data(), bytes.size());
  Msg got{};
  EXPECT_TRUE(r.header(&got));
  EXPECT_EQ(got, want);
  return r;
}

// Every strict prefix of `bytes` past the header fails `decode` with an
// error naming `name`.
void expect_every_cut_fails(const std::vector<char>& bytes, const std::string& name,
                            const std::function<Status(Reader&)>& decode) {
  constexpr size_t kHeader = sizeof(uint32_t) + sizeof(uint8_t);
  ASSERT_GT(bytes.size(), kHeader) << name;
  for (size_t n = kHeader; n < bytes.size(); ++n) {
    Reader r(bytes.data(), n);
    Msg t{};
    ASSERT_TRUE(r.header(&t));
    Status s = decode(r);
    ASSERT_FALSE(s.ok()) << name << " cut to " << n << " of " << bytes.size() << " B decoded";
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find(name), std::string::npos) << s.message();
  }
}

TEST(WireMessages, HelloRoundTripsAndCutsFail) {
  HelloMsg h;
  h.protocol = 7;
  h.version = "0.9 gcc 12";
  h.pid = 4242;
  h.host = "node-a";
  h.node = unavailable("chip 1 died");
  h.names = {"mm", "sum", ""};
  h.job.build = "abc:12";
  h.job.chips = 4;
  h.job.subs = 1;
  h.job.runtime = "tmr";
  h.job.ranks = 3;
  h.job.fields = {{"model", "moe"}, {"layers", "2"}};
  const auto bytes = h.encode();
  Reader r = open(bytes, Msg::kHello);
  HelloMsg got;
  ASSERT_TRUE(got.decode(r, 7).ok());
  EXPECT_EQ(r.left(), 0u);
  EXPECT_EQ(got.protocol, 7u);
  EXPECT_EQ(got.version, h.version);
  EXPECT_EQ(got.pid, 4242u);
  EXPECT_EQ(got.host, "node-a");
  EXPECT_EQ(got.node, h.node);
  EXPECT_EQ(got.names, h.names);
  EXPECT_EQ(got.job.build, "abc:12");
  EXPECT_EQ(got.job.chips, 4u);
  EXPECT_EQ(got.job.subs, 1u);
  EXPECT_EQ(got.job.runtime, "tmr");
  EXPECT_EQ(got.job.ranks, 3u);
  EXPECT_EQ(got.job.fields, h.job.fields);
  expect_every_cut_fails(bytes, "HELLO", [](Reader& x) { return HelloMsg{}.decode(x, 7); });
}

// Another protocol is read up to its number only: the rest may differ.
TEST(WireMessages, HelloOfAnotherProtocolStopsAtItsNumber) {
  HelloMsg h;
  h.protocol = 9;
  h.host = "elsewhere";
  const auto bytes = h.encode();
  Reader r = open(bytes, Msg::kHello);
  HelloMsg got;
  ASSERT_TRUE(got.decode(r, 7).ok());
  EXPECT_EQ(got.protocol, 9u);
  EXPECT_TRUE(got.host.empty());
}

TEST(WireMessages, WelcomeCarriesALongVerdict) {
  const std::string why(3 * kMaxErrorBytes, 'x');  // several ranks' refusals
  const auto bytes = WelcomeMsg{failed_precondition(why)}.encode();
  Reader r = open(bytes, Msg::kWelcome);
  WelcomeMsg got;
  ASSERT_TRUE(got.decode(r).ok());
  EXPECT_EQ(got.verdict.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(got.verdict.message(), why);
  expect_every_cut_fails(bytes, "WELCOME", [](Reader& x) { return WelcomeMsg{}.decode(x); });
}

TEST(WireMessages, TaskRoundTripsTensorsTagsAndScalars) {
  alignas(64) static float data[64];
  TaskMsg t;
  t.seq = 99;
  t.callable = 3;
  t.tensors = {make_tensor_external(data, {8, 8}), make_tensor_external(data + 32, {4, 8})};
  t.tags = {TensorArgType::INPUT, TensorArgType::INOUT};
  t.scalars = {1, ~0ull, 42};
  const auto bytes = t.encode();
  Reader r = open(bytes, Msg::kTask);
  TaskMsg got;
  ASSERT_TRUE(got.decode(r).ok());
  EXPECT_EQ(got.seq, 99u);
  EXPECT_EQ(got.callable, 3);
  ASSERT_EQ(got.tensors.size(), 2u);
  EXPECT_EQ(std::memcmp(&got.tensors[1], &t.tensors[1], sizeof(ChipTensor)), 0);
  EXPECT_EQ(got.tags, t.tags);
  EXPECT_EQ(got.scalars, t.scalars);
  expect_every_cut_fails(bytes, "TASK", [](Reader& x) { return TaskMsg{}.decode(x); });
}

// A short TASK keeps its seq, so the error reply names the task.
TEST(WireMessages, TaskOverTheLimitsIsRefusedAndKeepsItsSeq) {
  Writer w(Msg::kTask);
  w.put(uint64_t{17}).put(int32_t{0}).put(static_cast<uint32_t>(node::kMaxTaskTensors + 1));
  const auto bytes = w.take();
  Reader r = open(bytes, Msg::kTask);
  TaskMsg got;
  Status s = got.decode(r);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(got.seq, 17u);
  EXPECT_TRUE(got.tensors.empty());

  Writer w2(Msg::kTask);
  w2.put(uint64_t{18}).put(int32_t{0}).put(uint32_t{0}).put(static_cast<uint32_t>(node::kMaxTaskScalars + 1));
  const auto b2 = w2.take();
  Reader r2 = open(b2, Msg::kTask);
  EXPECT_FALSE(TaskMsg{}.decode(r2).ok());
}

TEST(WireMessages, CompletionAndControlRoundTrip) {
  {
    const auto bytes = CompletionMsg{5, internal_error("kernel 3 failed")}.encode();
    Reader r = open(bytes, Msg::kCompletion);
    CompletionMsg got;
    ASSERT_TRUE(got.decode(r).ok());
    EXPECT_EQ(got.seq, 5u);
    EXPECT_EQ(got.status, internal_error("kernel 3 failed"));
    expect_every_cut_fails(bytes, "COMPLETION", [](Reader& x) { return CompletionMsg{}.decode(x); });
  }
  {
    const auto bytes = ControlMsg{6, ControlOp::kFree, 11, 3}.encode();
    Reader r = open(bytes, Msg::kControl);
    ControlMsg got;
    ASSERT_TRUE(got.decode(r).ok());
    EXPECT_EQ(got.seq, 6u);
    EXPECT_EQ(got.op, ControlOp::kFree);
    EXPECT_EQ(got.a0, 11u);
    EXPECT_EQ(got.a1, 3u);
    expect_every_cut_fails(bytes, "CONTROL", [](Reader& x) { return ControlMsg{}.decode(x); });
  }
  {
    BufferEntry e;
    e.id = 12;
    e.generation = 2;
    e.offset = 4096;  // the owner's: not sent
    e.bytes = 1 << 20;
    const auto bytes = ControlReplyMsg{7, Status::Ok(), e}.encode();
    Reader r = open(bytes, Msg::kControlReply);
    ControlReplyMsg got;
    ASSERT_TRUE(got.decode(r).ok());
    EXPECT_EQ(got.seq, 7u);
    EXPECT_TRUE(got.status.ok());
    EXPECT_EQ(got.entry.id, 12u);
    EXPECT_EQ(got.entry.generation, 2u);
    EXPECT_EQ(got.entry.bytes, 1u << 20);
    EXPECT_EQ(got.entry.offset, 0u);
    expect_every_cut_fails(bytes, "CONTROL_REPLY", [](Reader& x) { return ControlReplyMsg{}.decode(x); });
  }
}

TEST(WireMessages, TransfersRoundTripUnderEachType) {
  for (Msg type : {Msg::kFetch, Msg::kPut}) {
    const auto bytes = TransferMsg{type, 70, 3, 1, 128, 256, 1}.encode();
    Reader r = open(bytes, type);
    TransferMsg got;
    got.type = type;
    ASSERT_TRUE(got.decode(r).ok());
    EXPECT_EQ(got.direct, 1);  // the owner answers on reply_tag(70)
    EXPECT_EQ(got.tag, 70);
    EXPECT_EQ(got.buffer_id, 3u);
    EXPECT_EQ(got.generation, 1u);
    EXPECT_EQ(got.offset, 128u);
    EXPECT_EQ(got.nbytes, 256u);
    expect_every_cut_fails(bytes, std::string(msg_name(type)), [type](Reader& x) {
      TransferMsg m;
      m.type = type;
      return m.decode(x);
    });
  }
  for (Msg type : {Msg::kFetchReply, Msg::kPutReady, Msg::kPutDone}) {
    const auto bytes = TransferReplyMsg{type, 71, out_of_range("offset 9 past the end")}.encode();
    Reader r = open(bytes, type);
    TransferReplyMsg got;
    got.type = type;
    ASSERT_TRUE(got.decode(r).ok());
    EXPECT_EQ(got.tag, 71);
    EXPECT_EQ(got.status, out_of_range("offset 9 past the end"));
    expect_every_cut_fails(bytes, std::string(msg_name(type)), [type](Reader& x) {
      TransferReplyMsg m;
      m.type = type;
      return m.decode(x);
    });
  }
}

TEST(WireMessages, ErrorsAreCutToTheHopLimit) {
  const auto bytes = CompletionMsg{1, internal_error(std::string(5 * kMaxErrorBytes, 'e'))}.encode();
  Reader r = open(bytes, Msg::kCompletion);
  CompletionMsg got;
  ASSERT_TRUE(got.decode(r).ok());
  EXPECT_EQ(got.status.message().size(), kMaxErrorBytes);
  EXPECT_NE(got.status.message().find("[truncated]"), std::string::npos);
}

TEST(WireMessages, DomainMessagesRoundTrip) {
  const DomainKey key{"moe", 3};
  {
    const auto bytes = DomainArrivedMsg{key, {0, 2, 5}, 0xfeedull}.encode();
    Reader r = open(bytes, Msg::kDomainArrived);
    DomainArrivedMsg got;
    ASSERT_TRUE(got.decode(r).ok());
    EXPECT_EQ(got.key, key);
    EXPECT_EQ(got.ranks, (std::vector<int32_t>{0, 2, 5}));
    EXPECT_EQ(got.fingerprint, 0xfeedull);
    expect_every_cut_fails(bytes, "DOMAIN_ARRIVED", [](Reader& x) { return DomainArrivedMsg{}.decode(x); });
  }
  {
    const auto bytes = DomainShareMsg{key, 4242, 17, (uint64_t{1} << 63) | 5, 0xbeefull}.encode();
    Reader r = open(bytes, Msg::kDomainShare);
    DomainShareMsg got;
    ASSERT_TRUE(got.decode(r).ok());
    EXPECT_EQ(got.key, key);
    EXPECT_EQ(got.pid, 4242);
    EXPECT_EQ(got.fd, 17);
    EXPECT_EQ(got.id, (uint64_t{1} << 63) | 5);
    EXPECT_EQ(got.fingerprint, 0xbeefull);
    expect_every_cut_fails(bytes, "DOMAIN_SHARE", [](Reader& x) { return DomainShareMsg{}.decode(x); });
  }
  {
    const auto bytes = DomainAbortMsg{key}.encode();
    Reader r = open(bytes, Msg::kDomainAbort);
    DomainAbortMsg got;
    ASSERT_TRUE(got.decode(r).ok());
    EXPECT_EQ(got.key, key);
    expect_every_cut_fails(bytes, "DOMAIN_ABORT", [](Reader& x) { return DomainAbortMsg{}.decode(x); });
  }
  {
    const std::string payload = "twelve bytes";
    DomainDataMsg m{key, {}};
    cm::RemoteReq put{static_cast<uint32_t>(cm::RemoteOp::kPut), 3, 64, payload.size(), 0};
    cm::RemoteReq flag{static_cast<uint32_t>(cm::RemoteOp::kFlag), 2, 0, 0, 77};
    m.records = {{1, put, payload}, {0, flag, {}}};
    const auto bytes = m.encode();
    Reader r = open(bytes, Msg::kDomainData);
    DomainDataMsg got;
    ASSERT_TRUE(got.decode(r).ok());
    EXPECT_EQ(got.key, key);
    ASSERT_EQ(got.records.size(), 2u);
    EXPECT_EQ(got.records[0].from, 1);
    EXPECT_EQ(std::memcmp(&got.records[0].req, &put, sizeof(put)), 0);
    EXPECT_EQ(got.records[0].payload, payload);
    EXPECT_EQ(got.records[1].from, 0);
    EXPECT_EQ(got.records[1].req.value, 77u);
    EXPECT_TRUE(got.records[1].payload.empty());
    // Built record by record, as the progress thread does: the same bytes.
    std::vector<char> built = DomainDataMsg::start(key);
    for (const DomainRecord& rec : m.records) DomainDataMsg::append(built, rec);
    EXPECT_EQ(built, bytes);
    // A cut inside a record fails; a cut between records is two messages.
    const size_t first = bytes.size() - sizeof(int32_t) - sizeof(cm::RemoteReq);
    for (size_t n = first - 1; n > first - payload.size() - sizeof(cm::RemoteReq); --n) {
      Reader c(bytes.data(), n);
      Msg t{};
      ASSERT_TRUE(c.header(&t));
      DomainDataMsg part;
      Status s = part.decode(c);
      EXPECT_FALSE(s.ok()) << "cut to " << n;
      EXPECT_NE(s.message().find("DOMAIN_DATA"), std::string::npos) << s.message();
    }
  }
}

TEST(WireMessages, DomainDataRefusesAnOversizedPut) {
  cm::RemoteReq put{static_cast<uint32_t>(cm::RemoteOp::kPut), 0, 0, cm::kRemoteChunkBytes + 1, 0};
  std::vector<char> bytes = DomainDataMsg::start(DomainKey{"d", 1});
  const int32_t from = 0;
  bytes.insert(bytes.end(), reinterpret_cast<const char*>(&from), reinterpret_cast<const char*>(&from) + 4);
  bytes.insert(bytes.end(), reinterpret_cast<const char*>(&put), reinterpret_cast<const char*>(&put) + sizeof(put));
  bytes.resize(bytes.size() + put.len);
  Reader r = open(bytes, Msg::kDomainData);
  DomainDataMsg got;
  Status s = got.decode(r);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("over kRemoteChunkBytes"), std::string::npos) << s.message();
}

TEST(WireMessages, DomainArrivedRefusesMoreRanksThanADomainHas) {
  Writer w(Msg::kDomainArrived);
  w.str("d").put(uint64_t{1}).put(static_cast<uint32_t>(cm::kMaxRanks + 1));
  for (int i = 0; i <= cm::kMaxRanks; ++i) w.put(int32_t{0});
  w.put(uint64_t{0});
  const auto bytes = w.take();
  Reader r = open(bytes, Msg::kDomainArrived);
  EXPECT_FALSE(DomainArrivedMsg{}.decode(r).ok());
}

TEST(WireMessages, EmptyMessagesAreTheirHeader) {
  for (Msg type : {Msg::kHeartbeat, Msg::kShutdown, Msg::kBye}) {
    const auto bytes = encode_empty(type);
    Reader r = open(bytes, type);
    EXPECT_EQ(r.left(), 0u);
  }
}

TEST(LauncherRank, ReadsOpenMpiThenPmixAndDefaultsToZero) {
  const char* used = nullptr;
  auto none = read_launcher_rank(map_env({}), &used);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, 0);
  EXPECT_STREQ(used, "");
  auto pmix = read_launcher_rank(map_env({{"PMIX_RANK", "5"}}), &used);
  ASSERT_TRUE(pmix.ok());
  EXPECT_EQ(*pmix, 5);
  EXPECT_STREQ(used, "PMIX_RANK");
  auto both = read_launcher_rank(map_env({{"OMPI_COMM_WORLD_RANK", "3"}, {"PMIX_RANK", "5"}}), &used);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(*both, 3);
  EXPECT_STREQ(used, "OMPI_COMM_WORLD_RANK");
}

TEST(LauncherRank, AMalformedValueIsAnErrorNamingTheVariable) {
  for (const char* text : {"two", "-1", "3x", "", "99999999999"}) {
    auto r = read_launcher_rank(map_env({{"OMPI_COMM_WORLD_RANK", text}}));
    ASSERT_FALSE(r.ok()) << "'" << text << "' parsed as " << *r;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("OMPI_COMM_WORLD_RANK"), std::string::npos) << r.status().message();
  }
  auto p = read_launcher_rank(map_env({{"PMIX_RANK", "x"}}));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("PMIX_RANK"), std::string::npos) << p.status().message();
}

}  // namespace
}  // namespace taskring::net
