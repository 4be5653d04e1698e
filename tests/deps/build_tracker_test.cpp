// BuildTracker (the build-time TensorMap of hbg and Graph recording) against a
// reference that runs compute_overlap on every entry: the byte-range
// pre-filter must neither drop nor add a dependency, nor change which
// entries a writer removes; reset() forgets every entry while the tracker's
// arena is rebuilt (on a buffer that grows with the builds it has seen).
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "deps/build_tracker.hpp"
#include "deps/rules.hpp"
#include "test_scale.hpp"

namespace {

using taskring::ChipTensor;
using taskring::DataType;
using taskring::deps::BuildTracker;
using taskring::deps::compute_overlap;
using taskring::deps::Overlap;

struct RefEntry {
  ChipTensor view;
  int32_t task;
  bool writer;
};

// The tracker's contract, written the slow way.
std::set<int32_t> reference_deps(std::vector<RefEntry>& entries, const ChipTensor& probe, bool writer) {
  std::set<int32_t> deps;
  std::vector<RefEntry> keep;
  for (const RefEntry& e : entries) {
    bool same_buffer = e.view.buffer.addr == probe.buffer.addr;
    bool considered = same_buffer && (e.writer || writer);
    Overlap o = considered ? compute_overlap(probe, e.view) : Overlap::kNone;
    if (o != Overlap::kNone) deps.insert(e.task);
    if (writer && o == Overlap::kCovered) continue;
    keep.push_back(e);
  }
  entries.swap(keep);
  return deps;
}

bool reference_has(const std::vector<RefEntry>& entries, const ChipTensor& probe, bool readers) {
  for (const RefEntry& e : entries) {
    if (e.view.buffer.addr != probe.buffer.addr || (!e.writer && !readers)) continue;
    if (compute_overlap(probe, e.view) != Overlap::kNone) return true;
  }
  return false;
}

TEST(BuildTracker, MatchesOverlapOnEveryEntry) {
  std::mt19937_64 rng(12);
  auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  constexpr uint32_t kRows = 12, kCols = 10;
  const int steps = taskring::testing::test_scale(1500, 400, 4000);
  BuildTracker tracker;  // one tracker, reset between rounds
  for (int round = 0; round < 4; ++round) {
    if (round > 0) tracker.reset();
    const uint32_t buffers = 2u << round;  // more buckets each round: the arena outgrows its buffer
    std::vector<RefEntry> ref;
    for (int task = 0; task < steps; ++task) {
      DataType dt = pick(4) == 0 ? DataType::INT16 : DataType::FLOAT32;
      uint32_t cols = dt == DataType::INT16 ? 2 * kCols : kCols;
      uint32_t shp[2] = {kRows, cols};
      ChipTensor b = *taskring::try_make_tensor(0x200000 + 0x100000 * uint64_t{pick(buffers)}, uint64_t{kRows} * kCols * 4,
                                                std::span<const uint32_t>(shp, 2), dt);
      // Mostly small windows (so ranges are often disjoint), sometimes
      // empty ones and transposes (conservative overlap).
      uint32_t h = pick(8) == 0 ? 0 : 1 + pick(3), w = 1 + pick(4);
      uint32_t y = pick(kRows - 3), x = pick(cols - 4);
      uint32_t s[2] = {h, w}, o[2] = {y, x};
      auto v = b.try_view(std::span<const uint32_t>(s, 2), std::span<const uint32_t>(o, 2));
      ASSERT_TRUE(v.ok()) << v.status().to_string();
      ChipTensor view = *v;
      if (pick(10) == 0) view = *view.try_transpose();
      const bool writer = pick(3) != 0;

      ASSERT_EQ(tracker.has_entry(view, false), reference_has(ref, view, false)) << "task " << task;
      ASSERT_EQ(tracker.has_entry(view, true), reference_has(ref, view, true)) << "task " << task;
      std::set<int32_t> got;
      tracker.for_each_dependency(view, writer, [&](int32_t p) { got.insert(p); });
      std::set<int32_t> want = reference_deps(ref, view, writer);
      ASSERT_EQ(got, want) << "round " << round << " task " << task << " " << view.describe();
      tracker.insert(view, task, writer);
      ref.push_back(RefEntry{view, task, writer});
    }
  }
}

}  // namespace
