// StartIndex: the writer entries of one TensorMap bucket, ordered by first
// byte, for buckets with many live views of one buffer.
//
// A two-level sorted array: chunks of at most kChunkMax (key, end, entry)
// items in key order (end: one past the entry's last byte, so a probe can
// pass over an entry that ends before it without touching the entry), and a flat array of each chunk's first key. A
// seek is a binary search over the first keys (one contiguous array) and then inside one chunk, so 10 000 entries take
// a few cache lines where a red-black tree (std::multimap) walks 14 nodes that each miss. Insert and erase move at most
// one chunk's pairs. Equal keys are kept in insertion order, as in a multimap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace taskring::deps {

class StartIndex {
 public:
  // A position: chunk and slot. Valid until the next add(); erase() returns
  // the position of the pair after the erased one.
  struct Pos {
    size_t chunk = 0;
    size_t slot = 0;
  };

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Adds (key, end, entry) after every item with an equal key.
  void add(uint64_t key, uint64_t end_byte, uint32_t entry) {
    if (chunks_.empty()) {
      chunks_.emplace_back();
      firsts_.push_back(key);
    }
    // The last chunk whose first key is <= key (chunk 0 for a smaller key).
    size_t c = static_cast<size_t>(std::upper_bound(firsts_.begin(), firsts_.end(), key) - firsts_.begin());
    c = c == 0 ? 0 : c - 1;
    std::vector<Pair>& v = chunks_[c];
    auto at = std::upper_bound(v.begin(), v.end(), key, [](uint64_t k, const Pair& p) { return k < p.first; });
    v.insert(at, Pair{key, end_byte, entry});
    firsts_[c] = v.front().first;
    ++size_;
    if (v.size() > kChunkMax) split(c);
  }

  // The first pair whose key is >= key (end() when none).
  Pos lower_bound(uint64_t key) const {
    if (chunks_.empty()) return end();
    // Start in the last chunk whose first key is < key: equal keys may end
    // the chunk before one that starts with that key.
    size_t c = static_cast<size_t>(std::lower_bound(firsts_.begin(), firsts_.end(), key) - firsts_.begin());
    c = c == 0 ? 0 : c - 1;
    const std::vector<Pair>& v = chunks_[c];
    size_t s = static_cast<size_t>(
        std::lower_bound(v.begin(), v.end(), key, [](const Pair& p, uint64_t k) { return p.first < k; }) - v.begin());
    return normalize(Pos{c, s});
  }
  Pos begin() const { return normalize(Pos{0, 0}); }
  Pos end() const { return Pos{chunks_.size(), 0}; }
  bool at_end(Pos p) const { return p.chunk >= chunks_.size(); }
  Pos next(Pos p) const { return normalize(Pos{p.chunk, p.slot + 1}); }
  uint64_t key(Pos p) const { return chunks_[p.chunk][p.slot].first; }
  uint64_t end_byte(Pos p) const { return chunks_[p.chunk][p.slot].end; }
  uint32_t entry(Pos p) const { return chunks_[p.chunk][p.slot].entry; }

  // Removes the pair at `p`; returns the position of the pair after it.
  Pos erase(Pos p) {
    std::vector<Pair>& v = chunks_[p.chunk];
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(p.slot));
    --size_;
    if (v.empty()) {
      chunks_.erase(chunks_.begin() + static_cast<std::ptrdiff_t>(p.chunk));
      firsts_.erase(firsts_.begin() + static_cast<std::ptrdiff_t>(p.chunk));
      return normalize(Pos{p.chunk, 0});
    }
    firsts_[p.chunk] = v.front().first;
    return normalize(p);
  }

 private:
  struct Pair {
    uint64_t first;
    uint64_t end;
    uint32_t entry;
  };
  static constexpr size_t kChunkMax = 64;  // items of 24 B: one chunk is 1.5 KiB

  // Moves past the end of a chunk to the start of the next one.
  Pos normalize(Pos p) const {
    while (p.chunk < chunks_.size() && p.slot >= chunks_[p.chunk].size()) {
      ++p.chunk;
      p.slot = 0;
    }
    return p;
  }
  void split(size_t c) {
    std::vector<Pair>& v = chunks_[c];
    std::vector<Pair> upper(v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    v.resize(v.size() / 2);
    const uint64_t first = upper.front().first;
    chunks_.insert(chunks_.begin() + static_cast<std::ptrdiff_t>(c + 1), std::move(upper));
    firsts_.insert(firsts_.begin() + static_cast<std::ptrdiff_t>(c + 1), first);
  }

  std::vector<std::vector<Pair>> chunks_;
  std::vector<uint64_t> firsts_;
  size_t size_ = 0;
};

}  // namespace taskring::deps
