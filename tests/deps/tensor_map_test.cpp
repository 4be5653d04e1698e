// Unit tests of the dependency component's rules and its TensorMap:
// compute_overlap (deps/rules.hpp) and TensorMap over owner records
// (deps/tensor_map.hpp).
#include <gtest/gtest.h>

#include <bitset>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "deps/tensor_map.hpp"
#include "test_scale.hpp"

namespace {

using taskring::ChipTensor;
using taskring::DataType;
using taskring::deps::compute_overlap;
using taskring::deps::Overlap;

constexpr uint64_t kAddr = 0x100000;

ChipTensor base(uint32_t rows = 8, uint32_t cols = 8, DataType dt = DataType::FLOAT32) {
  uint32_t shp[2] = {rows, cols};
  return *taskring::try_make_tensor(kAddr, uint64_t{rows} * cols * taskring::element_size(dt),
                                    std::span<const uint32_t>(shp, 2), dt);
}
ChipTensor win(const ChipTensor& t, uint32_t h, uint32_t w, uint32_t y, uint32_t x) {
  uint32_t s[2] = {h, w}, o[2] = {y, x};
  auto v = t.try_view(std::span<const uint32_t>(s, 2), std::span<const uint32_t>(o, 2));
  EXPECT_TRUE(v.ok()) << v.status().to_string();
  return *v;
}

// Calls fn(element offset) for every element of a view, dimension by
// dimension from the outermost.
template <typename Fn>
void visit_elements(const ChipTensor& t, uint32_t dim, uint64_t off, Fn& fn) {
  if (dim >= t.ndims || dim >= taskring::MAX_TENSOR_DIMS) {
    fn(off);
    return;
  }
  for (uint32_t i = 0; i < t.shapes[dim]; ++i) visit_elements(t, dim + 1, off + uint64_t{i} * t.strides[dim], fn);
}
template <typename Fn>
void visit_elements(const ChipTensor& t, Fn fn) {
  if (t.numel() > 0) visit_elements(t, 0, t.start_offset, fn);
}

// Byte set of a view.
std::set<uint64_t> bytes_of(const ChipTensor& t) {
  std::set<uint64_t> b;
  visit_elements(t, [&](uint64_t off) {
    for (uint64_t i = 0; i < t.elem_size(); ++i) b.insert(off * t.elem_size() + i);
  });
  return b;
}

TEST(ComputeOverlap, DisjointRowsAndColumnBlocks) {
  ChipTensor t = base();
  EXPECT_EQ(compute_overlap(win(t, 2, 8, 0, 0), win(t, 2, 8, 4, 0)), Overlap::kNone);
  // Same rows, disjoint column blocks: the byte ranges interleave, the
  // lattice check proves them disjoint.
  EXPECT_EQ(compute_overlap(win(t, 4, 4, 0, 0), win(t, 4, 4, 0, 4)), Overlap::kNone);
  EXPECT_EQ(compute_overlap(win(t, 4, 4, 0, 4), win(t, 4, 4, 0, 0)), Overlap::kNone);
}

TEST(ComputeOverlap, CoveredAndPartial) {
  ChipTensor t = base();
  EXPECT_EQ(compute_overlap(t, win(t, 3, 3, 2, 2)), Overlap::kCovered);
  EXPECT_EQ(compute_overlap(win(t, 3, 3, 2, 2), t), Overlap::kPartial);
  EXPECT_EQ(compute_overlap(win(t, 4, 4, 1, 1), win(t, 2, 2, 2, 2)), Overlap::kCovered);
  EXPECT_EQ(compute_overlap(win(t, 4, 4, 0, 0), win(t, 4, 4, 2, 2)), Overlap::kPartial);
  EXPECT_EQ(compute_overlap(win(t, 4, 4, 2, 2), win(t, 4, 4, 2, 2)), Overlap::kCovered);
  // Contiguous row ranges.
  EXPECT_EQ(compute_overlap(win(t, 4, 8, 0, 0), win(t, 2, 8, 1, 0)), Overlap::kCovered);
  EXPECT_EQ(compute_overlap(win(t, 2, 8, 1, 0), win(t, 4, 8, 2, 0)), Overlap::kPartial);
}

TEST(ComputeOverlap, TransposedAndRetypedAreConservative) {
  ChipTensor t = base();
  ChipTensor tr = *win(t, 4, 4, 0, 0).try_transpose(0, 1);
  // Elements of tr: rows 0-3 cols 0-3. Disjoint from the 0-3 x 4-7 block,
  // but on another lattice: may only report an overlap, never "covered".
  Overlap o = compute_overlap(tr, win(t, 4, 4, 0, 4));
  EXPECT_NE(o, Overlap::kCovered);
  // Overlapping elements must be found.
  EXPECT_NE(compute_overlap(tr, win(t, 2, 2, 1, 1)), Overlap::kNone);
  EXPECT_NE(compute_overlap(win(t, 2, 2, 1, 1), tr), Overlap::kNone);
  ChipTensor as_int = win(t, 4, 4, 0, 0);
  as_int.dtype = DataType::INT32;
  EXPECT_EQ(compute_overlap(as_int, win(t, 2, 2, 1, 1)), Overlap::kPartial);
  // A transposed full tensor overlaps everything.
  EXPECT_NE(compute_overlap(*t.try_transpose(0, 1), win(t, 1, 1, 7, 7)), Overlap::kNone);
}

TEST(ComputeOverlap, SteppedSlices) {
  ChipTensor t = base();
  ChipTensor even_rows = *t.try_slice(0, 0, 8, 2), odd_rows = *t.try_slice(0, 1, 8, 2);
  EXPECT_EQ(compute_overlap(even_rows, odd_rows), Overlap::kNone);
  EXPECT_EQ(compute_overlap(odd_rows, even_rows), Overlap::kNone);
  // Different strides: conservative, but never missed.
  EXPECT_NE(compute_overlap(t, even_rows), Overlap::kNone);
  EXPECT_EQ(compute_overlap(*t.try_slice(0, 0, 6, 2), *t.try_slice(0, 2, 4, 2)), Overlap::kCovered);
  EXPECT_NE(compute_overlap(even_rows, win(t, 1, 8, 2, 0)), Overlap::kNone);
  EXPECT_NE(compute_overlap(even_rows, t), Overlap::kCovered);
  ChipTensor even_cols = *t.try_slice(1, 0, 8, 2), odd_cols = *t.try_slice(1, 1, 8, 2);
  // Interleaved columns: conservative at worst, never "covered" (a covering
  // writer removes the entry, which would lose the dependency).
  EXPECT_NE(compute_overlap(even_cols, odd_cols), Overlap::kCovered);
  EXPECT_NE(compute_overlap(odd_cols, even_cols), Overlap::kCovered);
  EXPECT_NE(compute_overlap(even_cols, win(t, 1, 1, 3, 2)), Overlap::kNone);
}

TEST(ComputeOverlap, ZeroSizeNeverOverlaps) {
  ChipTensor t = base();
  uint32_t s[2] = {0, 4}, o[2] = {0, 0};
  ChipTensor empty = *t.try_view(std::span<const uint32_t>(s, 2), std::span<const uint32_t>(o, 2));
  EXPECT_EQ(compute_overlap(empty, t), Overlap::kNone);
  EXPECT_EQ(compute_overlap(t, empty), Overlap::kNone);
  EXPECT_EQ(compute_overlap(empty, empty), Overlap::kNone);
}

// Random views (windows, stepped slices, transposes, flattening, other
// element sizes) against brute-force byte sets: kNone only when disjoint,
// kCovered only when the probe holds every byte of the entry.
TEST(ComputeOverlap, RandomViewsAgreeWithByteSets) {
  std::mt19937 rng(12345);
  auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  const DataType types[] = {DataType::FLOAT32, DataType::INT32, DataType::FLOAT16, DataType::INT8};
  auto random_view = [&](const ChipTensor& src) {
    ChipTensor t = src;
    int ops = static_cast<int>(pick(3));
    for (int i = 0; i < ops; ++i) {
      switch (pick(4)) {
        case 0: {
          if (t.ndims != 2) break;
          uint32_t h = pick(t.shapes[0] + 1), w = pick(t.shapes[1] + 1);
          uint32_t s[2] = {h, w}, o[2] = {pick(t.shapes[0] - h + 1), pick(t.shapes[1] - w + 1)};
          auto v = t.try_view(std::span<const uint32_t>(s, 2), std::span<const uint32_t>(o, 2));
          if (v.ok()) t = *v;
          break;
        }
        case 1: {
          uint32_t d = pick(t.ndims);
          if (t.shapes[d] == 0) break;
          uint32_t a = pick(t.shapes[d]);
          uint32_t b = a + 1 + pick(t.shapes[d] - a);
          auto v = t.try_slice(d, a, b, 1 + pick(3));
          if (v.ok()) t = *v;
          break;
        }
        case 2:
          if (t.ndims == 2) t = *t.try_transpose(0, 1);
          break;
        case 3: {
          uint32_t n = static_cast<uint32_t>(t.numel());
          auto v = t.try_reshape(std::span<const uint32_t>(&n, 1));
          if (v.ok()) t = *v;
          break;
        }
      }
    }
    return t;
  };
  int checked = 0, exact_none = 0, covered = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    // Two bases over the same 192-byte buffer, possibly of different types.
    DataType d1 = types[pick(4)], d2 = pick(2) ? d1 : types[pick(4)];
    auto mk = [&](DataType dt) {
      uint32_t es = static_cast<uint32_t>(taskring::element_size(dt));
      uint32_t total = 192 / es;
      uint32_t cols = 1 + pick(std::min<uint32_t>(total, 12));
      uint32_t rows = 1 + pick(total / cols);
      uint32_t shp[2] = {rows, cols};
      return *taskring::try_make_tensor(kAddr, 192, std::span<const uint32_t>(shp, 2), dt);
    };
    ChipTensor p = random_view(mk(d1)), e = random_view(mk(d2));
    auto pb = bytes_of(p), eb = bytes_of(e);
    bool inter = false, holds = !eb.empty();
    for (uint64_t b : eb) {
      bool in = pb.count(b) != 0;
      inter |= in;
      holds &= in;
    }
    Overlap o = compute_overlap(p, e);
    ASSERT_TRUE(o != Overlap::kNone || !inter) << "missed overlap: probe " << p.describe() << " entry " << e.describe();
    ASSERT_TRUE(o != Overlap::kCovered || holds) << "false cover: probe " << p.describe() << " entry " << e.describe();
    ++checked;
    exact_none += (o == Overlap::kNone && !pb.empty() && !eb.empty());
    covered += o == Overlap::kCovered;
  }
  EXPECT_GT(exact_none, 1000);
  EXPECT_GT(covered, 1000);
}

// ---------------------------------------------------------------- TensorMap

using taskring::deps::Owner;
using taskring::deps::TensorMap;

struct Slots {
  std::vector<std::unique_ptr<Owner>> v;
  Owner* add(uint64_t seq) {
    v.push_back(std::make_unique<Owner>());
    v.back()->seq = seq;
    v.back()->id = taskring::PTO2TaskId::make(0, static_cast<uint32_t>(seq));
    return v.back().get();
  }
};

std::vector<Owner*> deps(TensorMap& m, const ChipTensor& t, bool writer) {
  std::vector<Owner*> out;
  m.for_each_dependency(t, writer, [&](Owner* s) { out.push_back(s); });
  return out;
}

TEST(TensorMap, ReadersSeeWritersWritersSeeBoth) {
  TensorMap m(16);
  Slots s;
  ChipTensor t = base();
  auto* w = s.add(1);
  auto* r = s.add(2);
  m.insert(win(t, 2, 8, 0, 0), w, true);
  m.insert(win(t, 2, 8, 4, 0), r, false);
  EXPECT_EQ(deps(m, win(t, 1, 8, 1, 0), false), std::vector<Owner*>{w});
  EXPECT_TRUE(deps(m, win(t, 1, 8, 4, 0), false).empty()) << "a reader does not wait for a reader";
  EXPECT_EQ(deps(m, win(t, 1, 8, 5, 0), true), std::vector<Owner*>{r}) << "WAR";
  EXPECT_TRUE(deps(m, win(t, 1, 8, 7, 0), true).empty());
  // Another buffer never matches.
  ChipTensor other = t;
  other.buffer.addr += 4096;
  EXPECT_TRUE(deps(m, other, true).empty());
}

TEST(TensorMap, CoveringWriterReplacesEntriesAndCompletedTasksDrop) {
  TensorMap m(16);
  Slots s;
  ChipTensor t = base();
  auto* w1 = s.add(1);
  auto* w2 = s.add(2);
  m.insert(win(t, 2, 2, 0, 0), w1, true);
  // A writer covering w1's region waits for it and removes the entry.
  EXPECT_EQ(deps(m, t, true), std::vector<Owner*>{w1});
  m.insert(t, w2, true);
  EXPECT_EQ(deps(m, win(t, 1, 1, 0, 0), false), std::vector<Owner*>{w2});
  // A partial writer does not remove.
  auto* w3 = s.add(3);
  m.insert(win(t, 2, 2, 6, 6), w3, true);
  auto d = deps(m, win(t, 1, 8, 7, 0), true);
  EXPECT_EQ(d.size(), 2u);
  d = deps(m, win(t, 1, 1, 6, 6), false);
  EXPECT_EQ(d.size(), 2u) << "the partial probe left both entries";
  // Completed producers are skipped; a reused slot (new seq) is stale.
  w2->completed.store(true);
  EXPECT_EQ(deps(m, win(t, 1, 1, 6, 6), false), std::vector<Owner*>{w3});
  w3->seq = 99;
  EXPECT_TRUE(deps(m, t, true).empty());
  m.reset();
  EXPECT_EQ(m.live_entries_hint(), 0u);
}

TEST(TensorMap, ManyBuffersGrowTheTable) {
  TensorMap m(16);
  Slots s;
  ChipTensor t = base(1, 4);
  std::vector<Owner*> w;
  for (int i = 0; i < 500; ++i) {
    ChipTensor b = t;
    b.buffer.addr = kAddr + 1024ull * static_cast<uint64_t>(i);
    w.push_back(s.add(static_cast<uint64_t>(i) + 1));
    m.insert(b, w.back(), true);
  }
  for (int i = 0; i < 500; ++i) {
    ChipTensor b = t;
    b.buffer.addr = kAddr + 1024ull * static_cast<uint64_t>(i);
    ASSERT_EQ(deps(m, b, false), std::vector<Owner*>{w[static_cast<size_t>(i)]}) << i;
  }
}

// Buffers that differ only in high address bits (heap outputs of equal size,
// 64 KiB or 1 MiB apart) must spread over the home slots of a table: with a
// product's low bits alone, 1024 such buffers had 4 home slots among 4096.
TEST(TensorMap, BuffersFarApartGetDistinctHomeSlots) {
  for (uint64_t stride : {uint64_t{1} << 10, uint64_t{1} << 16, uint64_t{1} << 20}) {
    std::set<uint64_t> homes;
    for (uint64_t k = 0; k < 1024; ++k) homes.insert(TensorMap::home_of(kAddr + k * stride, 64 - 12));  // 4096 slots
    EXPECT_GT(homes.size(), 700u) << "stride " << stride;
  }
}

// Random windows of one buffer against a byte-set model, long enough that the
// bucket's writers move into the ordered index (> 32 live writers) and stay
// there: every probe must report exactly the live overlapping entries
// (writers for a reader; writers and readers for a writer), and a writer
// removes the entries it covers.
TEST(TensorMap, ManyLiveViewsOfOneBufferMatchAByteModel) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    TensorMap m(16);
    Slots s;
    ChipTensor t = base(64, 64);
    using Elems = std::bitset<64 * 64>;  // elements of the 64x64 lattice (one dtype: bytes follow)
    auto elems_of = [](const ChipTensor& v) {
      Elems e;
      visit_elements(v, [&](uint64_t off) { e.set(off); });
      return e;
    };
    struct Model {
      Elems elems;
      Owner* slot;
      bool writer;
    };
    std::vector<Model> model;
    size_t max_live_writers = 0;
    // The model check is quadratic: a shorter run under the sanitizers
    // still passes 64 live writers (asserted below).
    const int ops = taskring::testing::test_scale(3000, 400, 3000);
    for (int op = 0; op < ops; ++op) {
      const uint32_t h = 1 + rng() % 3, w = 1 + rng() % 8;
      const ChipTensor v = win(t, h, w, rng() % (64 - h + 1), rng() % (64 - w + 1));
      const bool writer = rng() % 4 != 0;
      const Elems ve = elems_of(v);
      std::set<Owner*> want;
      std::vector<Model> kept;
      for (Model& e : model) {
        if (e.slot->completed.load()) continue;  // the map may drop it any time
        const bool overlaps = (e.elems & ve).any();
        const bool covered = (e.elems & ~ve).none();
        if (overlaps && (e.writer || writer)) want.insert(e.slot);
        if (!(writer && covered)) kept.push_back(e);
      }
      model.swap(kept);
      auto got_v = deps(m, v, writer);
      std::set<Owner*> got(got_v.begin(), got_v.end());
      ASSERT_EQ(got, want) << "seed " << seed << " op " << op;
      auto* slot = s.add(static_cast<uint64_t>(op) + 1);
      m.insert(v, slot, writer);
      model.push_back(Model{ve, slot, writer});
      if (rng() % 16 == 0 && !s.v.empty()) s.v[rng() % s.v.size()]->completed.store(true);
      size_t live_writers = 0;
      for (const Model& e : model) live_writers += e.writer && !e.slot->completed.load();
      max_live_writers = std::max(max_live_writers, live_writers);
    }
    EXPECT_GT(max_live_writers, 64u) << "the index path was not exercised";
  }
}

}  // namespace
