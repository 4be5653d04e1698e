#include "patterns.hpp"

#include <algorithm>

namespace peers {
namespace {

struct Access {
  uint32_t slot;
  bool write;
};

// Up to two accesses per task; reads are listed before writes.
int accesses(Pattern p, uint32_t i, Access out[2]) {
  switch (p) {
    case Pattern::chain: out[0] = {0, true}; return 1;
    case Pattern::independent: out[0] = {i, true}; return 1;
    case Pattern::mix8:
      out[0] = {i % 8, false};
      out[1] = {(i + 1) % 8, true};
      return 2;
    case Pattern::fanout: out[0] = {0, i == 0}; return 1;
  }
  return 0;
}

struct SlotState {
  int64_t last_writer = -1;
  std::vector<uint32_t> readers;  // since last_writer
};

}  // namespace

Edges infer_edges(Pattern p, std::size_t n) {
  std::size_t slots = p == Pattern::independent ? n : 8;
  std::vector<SlotState> state(slots);
  Edges e;
  e.offsets.reserve(n + 1);
  e.offsets.push_back(0);
  for (uint32_t i = 0; i < n; ++i) {
    Access acc[2];
    int k = accesses(p, i, acc);
    std::size_t first = e.preds.size();
    auto add = [&](uint32_t pred) {
      if (std::find(e.preds.begin() + first, e.preds.end(), pred) == e.preds.end()) e.preds.push_back(pred);
    };
    for (int a = 0; a < k; ++a) {
      SlotState& s = state[acc[a].slot];
      if (s.last_writer >= 0) add(static_cast<uint32_t>(s.last_writer));
      if (acc[a].write)
        for (uint32_t r : s.readers) add(r);
    }
    for (int a = 0; a < k; ++a) {
      SlotState& s = state[acc[a].slot];
      if (acc[a].write) {
        s.last_writer = i;
        s.readers.clear();
      } else {
        s.readers.push_back(i);
      }
    }
    e.offsets.push_back(static_cast<uint32_t>(e.preds.size()));
  }
  return e;
}

}  // namespace peers
