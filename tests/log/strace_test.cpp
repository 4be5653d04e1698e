#include "taskring/log/strace.hpp"

#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "log_test_util.hpp"
#include "taskring/log/percent_encode.hpp"

namespace taskring::log::strace {
namespace {

using namespace taskring::log::testing;

std::string head(uint64_t mono) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "[mono_ns=%llu][T0x%lx][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=%ld",
                static_cast<unsigned long long>(mono), static_cast<unsigned long>(pthread_self()),
                static_cast<int>(getpid()), static_cast<long>(syscall(SYS_gettid)));
  return buf;
}

std::string format(uint64_t mono, std::string_view name, int64_t ts, int64_t dur, uint64_t inv, uint64_t hid, int depth,
                   const Attrs& attrs = Attrs()) {
  char buf[kMaxRecord];
  size_t n = format_span(buf, mono, name, ts, dur, inv, hid, depth, attrs);
  EXPECT_LE(n, kMaxRecord);
  return std::string(buf, n);
}

// Decodes %XX; false if an escape is malformed.
bool decode(std::string_view s, std::string* out) {
  out->clear();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out->push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size()) return false;
    unsigned v = 0;
    if (std::sscanf(std::string(s.substr(i + 1, 2)).c_str(), "%2X", &v) != 1 || !std::isxdigit(s[i + 1]) ||
        !std::isxdigit(s[i + 2]))
      return false;
    out->push_back(static_cast<char>(v));
    i += 2;
  }
  return true;
}

TEST(Strace, RecordFormatIsByteExact) {
  std::string got = format(77, "chip.run", 1000, 250, 5, 0xabc, 0, Attrs{{"ntensor", 3}, {"clk", "dev"}});
  EXPECT_EQ(got, head(77) + " inv=5 hid=abc depth=0 name=chip.run ts=1000 dur=250 ntensor=3 clk=dev\n");
  // Empty attributes keep the space after dur=, as upstream writes it.
  EXPECT_EQ(format(1, "a.b", -5, 0, 1, 0, 3), head(1) + " inv=1 hid=0 depth=3 name=a.b ts=-5 dur=0 \n");
}

TEST(Strace, LargeIdentifiersFormatInFull) {
  std::string got = format(0, "x", INT64_MIN, INT64_MAX, UINT64_MAX, UINT64_MAX, INT_MIN);
  EXPECT_EQ(got, head(0) +
                     " inv=18446744073709551615 hid=ffffffffffffffff depth=-2147483648 name=x "
                     "ts=-9223372036854775808 dur=9223372036854775807 \n");
  EXPECT_NE(format(0, "x", 0, 0, (1ull << 32) + 1, 0, 0).find(" inv=4294967297 "), std::string::npos);
}

TEST(Strace, AttributeValueKinds) {
  Attrs a{{"i", -3}, {"u", UINT64_MAX}, {"d", 0.5}, {"s", "str"}, {"b", true}, {"f", 1.25f}};
  EXPECT_EQ(a.text(), "i=-3 u=18446744073709551615 d=0.5 s=str b=1 f=1.25");
  EXPECT_FALSE(a.truncated());
  EXPECT_EQ(Attrs().text(), "");
}

TEST(Strace, EncodesGrammarBytesNewlinesAndNonAscii) {
  const std::string evil = "a b=c%d[STRACE]\n\r\t\xc3\xa9~";
  EXPECT_EQ(encode_name(evil, 64), "a%20b%3Dc%25d%5BSTRACE%5D%0A%0D%09%C3%A9~");
  Attrs attrs{{"k y", evil}};
  EXPECT_EQ(attrs.text(), "k%20y=a%20b%3Dc%25d%5BSTRACE%5D%0A%0D%09%C3%A9~");
  std::string rec = format(9, evil, 1, 2, 3, 4, 0, attrs);
  // The injected "\n[STRACE]" cannot forge a second record or line.
  EXPECT_EQ(rec.find('\n'), rec.size() - 1);
  EXPECT_EQ(rec.find("[STRACE]"), rec.rfind("[STRACE]"));
  auto e = parse_envelope(rec.substr(0, rec.size() - 1));
  ASSERT_TRUE(e.has_value());
  auto s = parse_span(e->message);
  ASSERT_TRUE(s.has_value()) << e->message;
  std::string decoded;
  ASSERT_TRUE(decode(s->name, &decoded));
  EXPECT_EQ(decoded, evil);
}

TEST(Strace, TruncatesWholeUnitsAtCapacityWithMarker) {
  std::string a64(64, 'a');
  EXPECT_EQ(encode_name(a64, 64), a64);                               // exactly full: untouched
  EXPECT_EQ(encode_name(a64 + "b", 64), std::string(63, 'a') + "~");  // drop one byte for the marker
  EXPECT_EQ(encode_name(std::string(61, 'a') + "\n", 64), std::string(61, 'a') + "%0A");  // escape fits exactly
  EXPECT_EQ(encode_name(std::string(61, 'a') + "\nb", 64), std::string(61, 'a') + "~");   // drop the whole %0A
  EXPECT_EQ(encode_name(std::string(62, 'a') + "\n", 64), std::string(62, 'a') + "~");    // escape does not fit
  EXPECT_EQ(encode_name(std::string(63, 'a') + "\n", 64), std::string(63, 'a') + "~");
  std::string escapes;
  for (int i = 0; i < 21; ++i) escapes += "%0A";  // 63 bytes; a 22nd escape would need 66
  EXPECT_EQ(encode_name(std::string(30, '\n'), 64), escapes + "~");
}

TEST(Strace, TruncationNeverSplitsAnEscapeRandomized) {
  std::mt19937 rng(12345);
  const char alphabet[] = {'a', 'z', '\n', '%', ' ', '=', '[', static_cast<char>(0xE9), '.', '~'};
  for (int iter = 0; iter < 5000; ++iter) {
    size_t len = rng() % 120;
    std::string in;
    for (size_t i = 0; i < len; ++i) in.push_back(alphabet[rng() % sizeof(alphabet)]);
    for (size_t cap : {kNameCapacity, size_t{7}}) {
      std::string out = encode_name(in, cap);
      ASSERT_LE(out.size(), cap);
      std::string full = encode_name(in, 1000);
      if (full.size() <= cap) {
        ASSERT_EQ(out, full);
        continue;
      }
      ASSERT_FALSE(out.empty());
      ASSERT_EQ(out.back(), '~') << in;
      std::string body = out.substr(0, out.size() - 1);
      std::string decoded;
      ASSERT_TRUE(decode(body, &decoded)) << "split escape in '" << out << "'";
      ASSERT_EQ(in.compare(0, decoded.size(), decoded), 0);
      ASSERT_EQ(full.compare(0, body.size(), body), 0);
      // Maximal: the next unit really did not fit beside the marker.
      size_t next_unit = full[body.size()] == '%' ? 3 : 1;
      ASSERT_GT(body.size() + next_unit + 1, cap) << out;
    }
  }
}

TEST(Strace, AttrsTruncateAtCapacityAndIgnoreLaterOnes) {
  Attrs attrs;
  attrs.add({"key", std::string(185, 'v')});  // "key=" + 185 = 189
  EXPECT_EQ(attrs.text().size(), 189u);
  attrs.add({"k", 7});  // " k=7" = 4 more → 193 > 192
  EXPECT_TRUE(attrs.truncated());
  EXPECT_EQ(attrs.text(), "key=" + std::string(185, 'v') + " k~");  // '=' filled it; dropped for the marker
  attrs.add({"late", 1});
  EXPECT_EQ(attrs.text().size(), 192u);
  Attrs esc;
  esc.add({"k", std::string(186, 'v') + "\n"});  // "k=" + 186 = 188, %0A → 191 fits
  EXPECT_EQ(esc.text(), "k=" + std::string(186, 'v') + "%0A");
  esc.add({"x", 1});
  EXPECT_EQ(esc.text(), "k=" + std::string(186, 'v') + "%0A~");
  Attrs full;
  full.add({"k", std::string(187, 'v') + "\n\n"});  // 189 + %0A = 192 exactly, then %0A does not fit
  EXPECT_EQ(full.text(), "k=" + std::string(187, 'v') + "~");
}

TEST(Strace, EveryRecordFitsPosixPipeBuf) {
  static_assert(kMaxRecord == 512);
  std::string worst_name(300, '\x01');
  Attrs worst;
  for (int i = 0; i < 40; ++i) worst.add({"\x02\x02", "\x03\x03\x03\x03"});
  std::string rec = format(UINT64_MAX, worst_name, INT64_MIN, INT64_MIN, UINT64_MAX, UINT64_MAX, INT_MIN, worst);
  EXPECT_LE(rec.size(), kMaxRecord);
  EXPECT_GT(rec.size(), 400u);  // the worst case is really near the bound
}

TEST(Strace, FnvHashAndInvocationIds) {
  static_assert(fnv1a64("") == 0xcbf29ce484222325ull);
  static_assert(fnv1a64("a") == 0xaf63dc4c8601ec8cull);
  EXPECT_NE(fnv1a64("chip.run"), fnv1a64("chip.runx"));
  std::vector<std::vector<uint64_t>> ids(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&ids, t] {
      for (int i = 0; i < 1000; ++i) ids[t].push_back(alloc_invocation());
    });
  }
  for (auto& th : threads) th.join();
  std::set<uint64_t> all;
  for (auto& v : ids) {
    for (size_t i = 1; i < v.size(); ++i) EXPECT_LT(v[i - 1], v[i]);
    all.insert(v.begin(), v.end());
  }
  EXPECT_EQ(all.size(), 8000u);
  EXPECT_GE(*all.begin(), 1u);
}

std::vector<Span> capture_spans(const std::function<void()>& body) {
  LoggerStateGuard guard;
  set_threshold(Level::kTiming);
  PipeCapture cap;
  set_output_fd(cap.write_fd());
  body();
  set_output_fd(2);
  std::vector<Span> spans;
  for (const std::string& line : split_lines(cap.finish())) {
    auto e = parse_envelope(line);
    EXPECT_TRUE(e.has_value()) << line;
    if (!e || e->func == "clock_anchor") continue;
    EXPECT_EQ(e->func, "emit_host_span");
    auto s = parse_span(e->message);
    EXPECT_TRUE(s.has_value()) << line;
    if (s) spans.push_back(*s);
  }
  return spans;
}

TEST(Strace, ScopesTrackDepthAndCarryBoundInvocation) {
  uint64_t inv = 0;
  std::vector<Span> spans = capture_spans([&inv] {
    InvocationScope run(fnv1a64("callable"));
    inv = run.inv();
    EXPECT_EQ(current_invocation(), inv);
    {
      StraceSpan outer("chip.run");
      EXPECT_EQ(current_depth(), 1);
      {
        StraceSpan bind("chip.run.bind");
        bind.attr("ntensor", 4).attr("ratio", 0.25);
        StraceSpan args("chip.run.bind.args");
        EXPECT_EQ(current_depth(), 3);
      }
      StraceSpan run_span("chip.run.runner_run");
    }
    EXPECT_EQ(current_depth(), 0);
  });
  EXPECT_EQ(current_invocation(), 0u);  // restored
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans[0].name, "chip.run.bind.args");
  EXPECT_EQ(spans[0].depth, 2);
  EXPECT_EQ(spans[1].name, "chip.run.bind");
  EXPECT_EQ(spans[1].depth, 1);
  EXPECT_EQ(spans[1].attrs, "ntensor=4 ratio=0.25");
  EXPECT_EQ(spans[2].name, "chip.run.runner_run");
  EXPECT_EQ(spans[2].depth, 1);
  EXPECT_EQ(spans[3].name, "chip.run");
  EXPECT_EQ(spans[3].depth, 0);
  for (const Span& s : spans) {
    EXPECT_EQ(s.inv, inv);
    EXPECT_EQ(s.hid, fnv1a64("callable"));
    EXPECT_EQ(s.pid, getpid());
    EXPECT_EQ(s.tid, syscall(SYS_gettid));
    EXPECT_GE(s.dur, 0);
    // Children lie inside the root span.
    EXPECT_GE(s.ts, spans[3].ts);
    EXPECT_LE(s.ts + s.dur, spans[3].ts + spans[3].dur);
  }
}

// One record, one write(2) (DESIGN.md §4), checked without relying on a race:
// on a SOCK_SEQPACKET socket every write(2) is one message, so a record
// written in two calls arrives as two messages however the writers are
// scheduled. Every message must hold whole lines, and the records must all
// be there: an explicit span, an RAII span with attrs, a batch, and a plain
// log record.
TEST(Strace, EveryRecordLeavesInOneWrite) {
  LoggerStateGuard guard;
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
  set_output_fd(sv[0]);
  set_threshold(Level::kTiming);
  EXPECT_TRUE(emit_span("one.write.explicit", 10, 20, 3, 0xabc, 1, Attrs{{"k", "v"}}));
  {
    StraceSpan span("one.write.raii", 3, 0xabc);
    span.attr("tasks", 5).attr("name", std::string(kAttrsCapacity, 'a'));
  }
  {
    SpanBatch batch;
    batch.add("one.write.batch1", 1, 1, 3, 0xabc, 2);
    batch.add("one.write.batch2", 2, 1, 3, 0xabc, 2);
  }
  TR_LOG_WARN("one write for a plain record too: %d", 7);
  set_output_fd(2);
  ::shutdown(sv[0], SHUT_WR);
  std::vector<std::string> messages;
  char buf[1 << 16];
  ssize_t n;
  while ((n = ::recv(sv[1], buf, sizeof buf, 0)) > 0) messages.emplace_back(buf, static_cast<size_t>(n));
  ::close(sv[0]);
  ::close(sv[1]);
  std::string all;
  for (const std::string& m : messages) {
    ASSERT_FALSE(m.empty());
    EXPECT_EQ(m.rfind("[mono_ns=", 0), 0u) << "a write starts inside a record: " << m;
    EXPECT_EQ(m.back(), '\n') << "a write ends inside a record: " << m;
    all += m;
  }
  for (const char* name : {"one.write.explicit", "one.write.raii", "one.write.batch1", "one.write.batch2"}) {
    EXPECT_NE(all.find(std::string("name=") + name + " "), std::string::npos) << name << " missing in\n" << all;
  }
  EXPECT_NE(all.find("one write for a plain record too: 7"), std::string::npos) << all;
}

TEST(SpanBatch, DeliversItsRecordsInOrderInOneWrite) {
  uint64_t writes = 0;
  std::vector<Span> spans = capture_spans([&writes] {
    EXPECT_TRUE(emit_span("warm", 0, 1, 1, 1, 0));  // the clock anchor goes out with the first record
    const uint64_t before = thread_write_calls();
    {
      SpanBatch batch;
      for (int i = 0; i < 7; ++i) batch.add("chip.run.part" + std::to_string(i), 100 + i, 10, 9, 0xabc, 7 - i);
      EXPECT_EQ(thread_write_calls(), before) << "nothing leaves before the flush";
      EXPECT_TRUE(batch.flush());
      EXPECT_TRUE(batch.flush());  // empty: writes nothing
    }
    writes = thread_write_calls() - before;
  });
  EXPECT_EQ(writes, 1u);
  ASSERT_EQ(spans.size(), 8u);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(spans[static_cast<size_t>(i) + 1].name, "chip.run.part" + std::to_string(i));
    EXPECT_EQ(spans[static_cast<size_t>(i) + 1].ts, 100 + i);
    EXPECT_EQ(spans[static_cast<size_t>(i) + 1].depth, 7 - i);
    EXPECT_EQ(spans[static_cast<size_t>(i) + 1].inv, 9u);
  }
}

TEST(SpanBatch, OutgrowingOnePipeWriteSplitsBetweenWholeRecords) {
  // 40 records with the longest name and attributes take several writes,
  // and every line must still parse.
  const std::string value(kAttrsCapacity, 'v');
  uint64_t writes = 0;
  std::vector<Span> spans = capture_spans([&] {
    EXPECT_TRUE(emit_span("warm", 0, 1, 1, 1, 0));
    const uint64_t before = thread_write_calls();
    {
      SpanBatch batch;
      for (int i = 0; i < 40; ++i)
        batch.add(std::string(kNameCapacity - 3, 'n') + std::to_string(i + 10), i, 1, 1, 1, 1, Attrs{{"k", value}});
    }  // the destructor flushes
    writes = thread_write_calls() - before;
  });
  // At least kBatchBytes / kMaxRecord records go out per write.
  const uint64_t per_write = SpanBatch::kBatchBytes / kMaxRecord;
  EXPECT_GE(writes, 2u);
  EXPECT_LE(writes, (40 + per_write - 1) / per_write);
  ASSERT_EQ(spans.size(), 41u);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(spans[static_cast<size_t>(i) + 1].ts, i);
}

TEST(SpanBatch, BelowTimingAddsNothing) {
  LoggerStateGuard guard;
  PipeCapture cap;
  set_output_fd(cap.write_fd());
  set_threshold(Level::kWarn);
  const uint64_t writes = thread_write_calls();
  {
    SpanBatch batch;
    batch.add("x", 0, 0, 1, 1, 0);
    EXPECT_TRUE(batch.flush());
  }
  EXPECT_EQ(thread_write_calls(), writes);
  set_output_fd(2);
  EXPECT_EQ(cap.finish(), "");
}

TEST(Strace, ExplicitSpansAndDeviceAttrs) {
  std::vector<Span> spans = capture_spans([] {
    EXPECT_TRUE(emit_span("chip.run.runner_run.device_wall", 0, 9000, 42, 0xfeed, 2, Attrs{{"clk", "dev"}}));
  });
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].inv, 42u);
  EXPECT_EQ(spans[0].hid, 0xfeedu);
  EXPECT_EQ(spans[0].ts, 0);
  EXPECT_EQ(spans[0].dur, 9000);
  EXPECT_EQ(spans[0].attrs, "clk=dev");
}

TEST(Strace, BelowTimingCostsNoClockNoFormattingNoWrite) {
  LoggerStateGuard guard;
  PipeCapture cap;
  set_output_fd(cap.write_fd());
  for (Level level : {Level::kWarn, Level::kError, Level::kNul}) {
    set_threshold(level);
    uint64_t writes = thread_write_calls();
    {
      StraceSpan span("chip.run");
      EXPECT_FALSE(span.active());
      span.attr("k", 1);
      EXPECT_EQ(current_depth(), 0);
    }
    EXPECT_FALSE(emit_span("x", 0, 0, 1, 1, 0));
    EXPECT_EQ(thread_write_calls(), writes);
  }
  set_output_fd(2);
  EXPECT_EQ(cap.finish(), "");
}

}  // namespace
}  // namespace taskring::log::strace
