#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strace_writer.hpp"
#include "taskring/trace/parser.hpp"
#include "taskring/trace/percent.hpp"

namespace taskring::trace {
namespace {

using testing::anchor;
using testing::noise;
using testing::Prefix;
using testing::SpanRec;
using testing::strace;

SpanRec rec(uint64_t inv, std::string name = "chip.run", int64_t pid = 100) {
  SpanRec s;
  s.inv = inv;
  s.name = std::move(name);
  s.pid = pid;
  s.ts = 1000 + static_cast<int64_t>(inv);
  return s;
}

void expect_balanced(const Trace& t) {
  EXPECT_EQ(t.counts.heads, t.counts.parsed + t.counts.unknown_version + t.counts.torn);
}

TEST(TraceParser, ParsesOneRecordField) {
  SpanRec s = rec(7, "chip.run.bind");
  s.tid = 4242;
  s.hid = 0xDEADBEEF00112233ull;
  s.depth = 1;
  s.ts = -5;
  s.dur = 123456789;
  s.attrs = "ntensor=3";
  Trace t = parse_trace(strace(s) + "\n");
  ASSERT_EQ(t.spans.size(), 1u);
  const Span& p = t.spans[0];
  EXPECT_EQ(p.pid, 100);
  EXPECT_EQ(p.tid, 4242);
  EXPECT_EQ(p.inv, 7u);
  EXPECT_EQ(p.hid, 0xDEADBEEF00112233ull);
  EXPECT_EQ(p.depth, 1);
  EXPECT_EQ(t.name(p), "chip.run.bind");
  EXPECT_EQ(p.ts_ns, -5);
  EXPECT_EQ(p.dur_ns, 123456789);
  EXPECT_EQ(p.attrs, "ntensor=3");
  EXPECT_EQ(t.counts.heads, 1u);
  EXPECT_EQ(t.counts.torn, 0u);
  EXPECT_EQ(t.counts.lines, 1u);
}

TEST(TraceParser, AcceptsUppercaseAndPrefixedHid) {
  Trace t = parse_trace(
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=ABCDEF depth=0 name=a ts=1 dur=1\n"
      "[STRACE] v=1 pid=1 tid=1 inv=2 hid=0xabcdef depth=0 name=a ts=1 dur=1\n");
  ASSERT_EQ(t.spans.size(), 2u);
  EXPECT_EQ(t.spans[0].hid, 0xabcdefu);
  EXPECT_EQ(t.spans[1].hid, 0xabcdefu);
}

TEST(TraceParser, TwoAndThreeRecordsOnOneLine) {
  Trace two = parse_trace(strace(rec(1)) + strace(rec(2)) + "\n");
  ASSERT_EQ(two.spans.size(), 2u);
  EXPECT_EQ(two.spans[0].attrs, "");  // the second record did not leak into the first's attrs
  EXPECT_EQ(two.spans[1].inv, 2u);

  SpanRec a = rec(1);
  a.attrs = "k=v";
  Trace three = parse_trace(strace(a) + strace(rec(2), Prefix::kNone) + strace(rec(3), Prefix::kWall) + "\n\n\n");
  ASSERT_EQ(three.spans.size(), 3u);
  EXPECT_EQ(three.spans[0].attrs, "k=v");
  EXPECT_EQ(three.spans[1].attrs, "");
  EXPECT_EQ(three.spans[2].inv, 3u);
  EXPECT_EQ(three.counts.heads, 3u);
  expect_balanced(three);
}

TEST(TraceParser, RecordEndsAtEnvelopeWithQualifiedFunction) {
  Trace t = parse_trace(strace(rec(1)) + " x=1[mono_ns=99][T0x1][INFO] ns::Worker::run: hello\n");
  ASSERT_EQ(t.spans.size(), 1u);
  EXPECT_EQ(t.spans[0].attrs, "x=1");
}

TEST(TraceParser, RecordSplicedInsideAnotherLinesText) {
  // Another writer's line was cut in two by an atomic STRACE record.
  std::string log =
      noise("first half of a long message ") + strace(rec(1)) + "\n" + "second half of it\n" + strace(rec(2)) + "\n";
  Trace t = parse_trace(log);
  ASSERT_EQ(t.spans.size(), 2u);
  EXPECT_EQ(t.spans[0].attrs, "");
  EXPECT_EQ(t.counts.torn, 0u);
  EXPECT_EQ(t.counts.lines, 3u);
}

TEST(TraceParser, TornRecordIsCountedNotParsed) {
  std::string whole = strace(rec(1));
  std::string cut = whole.substr(0, whole.find(" ts="));  // torn before ts=
  Trace t = parse_trace(cut + noise("other") + "\n" + strace(rec(2)) + "\n");
  EXPECT_EQ(t.counts.heads, 2u);
  EXPECT_EQ(t.counts.parsed, 1u);
  EXPECT_EQ(t.counts.torn, 1u);
  ASSERT_EQ(t.spans.size(), 1u);
  EXPECT_EQ(t.spans[0].inv, 2u);
  ASSERT_FALSE(t.diagnostics.empty());
  EXPECT_EQ(t.diagnostics[0].kind, Diagnostic::Kind::kTornRecord);
  EXPECT_EQ(t.diagnostics[0].where, "<input>:1");
  expect_balanced(t);
}

TEST(TraceParser, TornVariants) {
  for (std::string bad : {"[STRACE]", "[STRACE] v=", "[STRACE] v=1 pid=x tid=1",
                          "[STRACE] v=1 pid=1 tid=1 inv=1 hid=zz depth=0 name=a ts=1 dur=1",
                          "[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=-1 name=a ts=1 dur=1",
                          "[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=a ts=1 dur=1x",
                          "[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name= ts=1 dur=1"}) {
    Trace t = parse_trace(bad + "\n");
    EXPECT_EQ(t.counts.torn, 1u) << bad;
    EXPECT_TRUE(t.spans.empty()) << bad;
  }
}

// Every cut of a record before its last required value is torn, with nothing
// parsed from it: at each field boundary (before the space, after it), inside
// each key, and after each '=' with the value missing. A parser that took a
// record cut before `dur=` as a 0 us span would judge a run with a cut orch
// or sched record VALID with a wrong time. The cuts are tested alone on a
// line, at the end of the input (no newline), and followed by the next
// record's envelope on the same line.
TEST(TraceParser, EveryCutOfARecordIsTornWithNothingParsed) {
  const std::string whole = strace(rec(1), Prefix::kNone);  // "[STRACE] v=1 pid=... ts=... dur=... attrs"
  const size_t dur_value = whole.find(" dur=") + 5;
  ASSERT_NE(dur_value, std::string::npos + 5);
  std::vector<size_t> cuts;
  const size_t head = std::string("[STRACE]").size();
  for (size_t i = head; i <= dur_value; ++i) {
    const char c = whole[i];
    const bool boundary = c == ' ' || whole[i - 1] == ' ';
    const bool in_key = c != ' ' && whole.find('=', i) < whole.find(' ', i);  // up to this field's '='
    const bool empty_value = whole[i - 1] == '=';
    if (boundary || in_key || empty_value) cuts.push_back(i);
  }
  ASSERT_GT(cuts.size(), 40u);  // 9 required fields, each cut several ways
  const std::string next = strace(rec(2));
  for (size_t cut : cuts) {
    const std::string part = whole.substr(0, cut);
    for (const std::string& log : {part + "\n" + next + "\n", next + "\n" + part, part + next + "\n"}) {
      Trace t = parse_trace(log);
      EXPECT_EQ(t.counts.heads, 2u) << "cut at " << cut << ": " << part;
      EXPECT_EQ(t.counts.torn, 1u) << "cut at " << cut << ": " << part;
      EXPECT_EQ(t.counts.parsed, 1u) << "cut at " << cut << ": " << part;
      ASSERT_EQ(t.spans.size(), 1u) << "cut at " << cut << ": " << part;
      EXPECT_EQ(t.spans[0].inv, 2u) << "cut at " << cut << ": the cut record was parsed: " << part;
      expect_balanced(t);
    }
  }
  // The same record whole parses: the cuts, not the record, are torn.
  Trace ok = parse_trace(whole + "\n");
  EXPECT_EQ(ok.counts.parsed, 1u);
  EXPECT_EQ(ok.counts.torn, 0u);
}

TEST(TraceParser, EofWithoutNewline) {
  Trace t = parse_trace(strace(rec(1)) + "\n" + strace(rec(2)));
  ASSERT_EQ(t.spans.size(), 2u);
  EXPECT_EQ(t.spans[1].dur_ns, 10);
  EXPECT_EQ(t.counts.lines, 2u);
}

TEST(TraceParser, CrlfLineEndings) {
  SpanRec a = rec(1);
  a.attrs = "k=v";
  Trace t = parse_trace(strace(a) + "\r\n" + strace(rec(2)) + "\r\n" + anchor(100, 5, 6) + "\r\n");
  ASSERT_EQ(t.spans.size(), 2u);
  EXPECT_EQ(t.spans[0].attrs, "k=v");
  EXPECT_EQ(t.spans[1].dur_ns, 10);
  EXPECT_EQ(t.counts.anchors, 1u);
  EXPECT_EQ(t.counts.torn_anchors, 0u);
}

TEST(TraceParser, EncodedNamesAndAttrsRoundTrip) {
  const std::string evil = "a\nb%c [STRACE] =e\xC3\xA9\xE2\x82\xAC]";
  const std::string evil_attrs = "msg=a\nb%c [STRACE] v=1 pid=9 d=e f\xC3\xA9\xE2\x82\xAC] [mono_ns=1]";
  SpanRec s = rec(1, evil);
  s.attrs = evil_attrs;
  std::string line = strace(s);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.find("[STRACE]", line.find("[STRACE]") + 1), std::string::npos);  // cannot forge a second head
  Trace t = parse_trace(line + "\n");
  EXPECT_EQ(t.counts.heads, 1u);
  ASSERT_EQ(t.spans.size(), 1u);
  EXPECT_EQ(t.name(t.spans[0]), evil);
  EXPECT_EQ(t.spans[0].attrs, evil_attrs);
  EXPECT_FALSE(t.spans[0].name_truncated);
  EXPECT_EQ(t.counts.bad_escapes, 0u);
}

TEST(TraceParser, EscapeExactlyAtCapacityKeepsWholeUnits) {
  // 61 bytes + "%0A" fills the 64-byte name exactly; with more input following,
  // the whole escape is dropped and `~` appended (never "%0~").
  std::string name = std::string(61, 'n') + "\nxyz";
  std::string enc = testing::encode_field(name, testing::kNameCap, false);
  EXPECT_EQ(enc, std::string(61, 'n') + "~");
  // 62 bytes: the escape does not fit at all.
  enc = testing::encode_field(std::string(62, 'n') + "\n", testing::kNameCap, false);
  EXPECT_EQ(enc, std::string(62, 'n') + "~");
  // Exactly 64 plain bytes fit without truncation.
  EXPECT_EQ(testing::encode_field(std::string(64, 'n'), testing::kNameCap, false), std::string(64, 'n'));

  SpanRec s = rec(1, name);
  s.attrs = "k=" + std::string(187, 'v') + "%";  // "%25" fills 192 exactly, then is dropped
  s.attrs += "more";
  Trace t = parse_trace(strace(s) + "\n");
  ASSERT_EQ(t.spans.size(), 1u);
  EXPECT_EQ(t.name(t.spans[0]), std::string(61, 'n') + "~");
  EXPECT_TRUE(t.spans[0].name_truncated);
  EXPECT_TRUE(t.spans[0].attrs_truncated);
  EXPECT_EQ(t.spans[0].attrs, "k=" + std::string(187, 'v') + "~");
  EXPECT_EQ(t.counts.bad_escapes, 0u);
  EXPECT_LE(strace(s).size() + 1, 512u);
}

TEST(TraceParser, MalformedEscapeIsKeptLiterally) {
  Trace t = parse_trace("[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=ab%0~ ts=1 dur=1 k=%zz\n");
  ASSERT_EQ(t.spans.size(), 1u);
  EXPECT_EQ(t.name(t.spans[0]), "ab%0~");
  EXPECT_EQ(t.spans[0].attrs, "k=%zz");
  EXPECT_EQ(t.counts.bad_escapes, 2u);
}

TEST(TraceParser, InvocationIdsUpTo2To64Minus1) {
  Trace t = parse_trace(strace(rec(18446744073709551615ull)) + "\n" + strace(rec(4294967296ull)) + "\n" +
                        "[STRACE] v=1 pid=1 tid=1 inv=18446744073709551616 hid=1 depth=0 name=a ts=1 dur=1\n");
  ASSERT_EQ(t.spans.size(), 2u);
  EXPECT_EQ(t.spans[0].inv, 18446744073709551615ull);
  EXPECT_EQ(t.spans[1].inv, 4294967296ull);
  EXPECT_EQ(t.counts.torn, 1u);  // 2^64 does not fit
}

TEST(TraceParser, UnknownVersionIsCountedAndSkipped) {
  std::string v2 = "[STRACE] v=2 pid=1 tid=1 inv=1 hid=1 depth=0 name=a ts=1 dur=1 future=yes";
  Trace t = parse_trace(v2 + strace(rec(5)) + "\n" + v2 + "\n");
  EXPECT_EQ(t.counts.heads, 3u);
  EXPECT_EQ(t.counts.unknown_version, 2u);
  EXPECT_EQ(t.counts.torn, 0u);
  ASSERT_EQ(t.spans.size(), 1u);
  EXPECT_EQ(t.spans[0].inv, 5u);
  expect_balanced(t);
}

TEST(TraceParser, MissingClockAnchorIsReported) {
  Trace t = parse_trace(anchor(100, 10, 20) + "\n" + strace(rec(1, "chip.run", 100)) + "\n" +
                        strace(rec(1, "chip.run", 200)) + "\n");
  EXPECT_EQ(t.counts.missing_anchors, 1u);
  bool found = false;
  for (const auto& d : t.diagnostics) found |= d.kind == Diagnostic::Kind::kMissingAnchor && d.where == "pid 200";
  EXPECT_TRUE(found);
  ASSERT_NE(t.anchor(100), nullptr);
  EXPECT_EQ(t.anchor(200), nullptr);
}

TEST(TraceParser, DuplicatedClockAnchorLastWins) {
  Trace t = parse_trace(anchor(100, 10, 20) + "\n" + anchor(100, 30, 40, Prefix::kWall) + "\n");
  EXPECT_EQ(t.counts.anchors, 2u);
  EXPECT_EQ(t.counts.duplicate_anchors, 1u);
  ASSERT_EQ(t.anchors.size(), 1u);
  EXPECT_EQ(t.anchors[0].mono_ns, 30);
  EXPECT_EQ(t.diagnostics.at(0).kind, Diagnostic::Kind::kDuplicateAnchor);
}

TEST(TraceParser, IncompleteAnchorsAreRejected) {
  Trace t = parse_trace(anchor(100, 10, 20) + " junk\n" + "[CLOCK_ANCHOR] v=1 pid=3 mono_ns=1\n" +
                        "[CLOCK_ANCHOR] v=2 pid=3 mono_ns=1 wall_ns=2\n");
  EXPECT_EQ(t.counts.anchors, 0u);
  EXPECT_EQ(t.counts.torn_anchors, 3u);
  EXPECT_TRUE(t.anchors.empty());
}

TEST(TraceParser, AnchorFollowedByRecordOnSameLine) {
  Trace t = parse_trace(anchor(100, 10, 20) + strace(rec(1)) + "\n");
  EXPECT_EQ(t.counts.anchors, 1u);
  EXPECT_EQ(t.spans.size(), 1u);
}

TEST(TraceParser, DeviceClockAttrIsRecognised) {
  SpanRec s = rec(1, "chip.run.runner_run.device_wall");
  s.attrs = "clk=dev";
  Trace t = parse_trace(strace(s) + "\n" + strace(rec(2)) + "\n");
  ASSERT_EQ(t.spans.size(), 2u);
  EXPECT_TRUE(t.spans[0].device_clock);
  EXPECT_FALSE(t.spans[1].device_clock);
}

TEST(TraceParser, FeedsSeveralSourcesAndInternsNames) {
  TraceParser p;
  p.feed(strace(rec(1)) + "\n", "a.log");
  p.feed("garbage\n" + strace(rec(2)) + "[STRACE] v=1 pid=1", "b.log");
  Trace t = p.finish();
  EXPECT_EQ(t.sources.size(), 2u);
  EXPECT_EQ(t.spans.size(), 2u);
  EXPECT_EQ(t.names.size(), 1u);
  EXPECT_EQ(t.spans[1].source, 1u);
  EXPECT_EQ(t.counts.torn, 1u);
  EXPECT_EQ(t.diagnostics.at(0).where, "b.log:2");
}

TEST(TraceParser, NoiseAndBracketsWithoutRecords) {
  Trace t = parse_trace("[[[ [STRACE [CLOCK [mono_ns=] [2026-01-01 x\n\n" + noise("[a] [b]") + "\n");
  EXPECT_EQ(t.counts.heads, 0u);
  EXPECT_TRUE(t.spans.empty());
  EXPECT_EQ(t.counts.lines, 3u);
}

TEST(PercentDecode, DecodesBothCases) {
  std::string out;
  EXPECT_EQ(percent_decode("a%2fb%2Fc%", out), 1u);
  EXPECT_EQ(out, "a/b/c%");
}

}  // namespace
}  // namespace taskring::trace
