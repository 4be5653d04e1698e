#include "deps/tensor_map.hpp"

#include <algorithm>

namespace taskring::deps {

TensorMap::TensorMap(uint64_t initial_buckets) {
  uint64_t c = 16;
  while (c < initial_buckets) c <<= 1;
  resize_table(c);
  pool_.reserve(1024);
}

uint32_t TensorMap::new_pool_entry() {
  // Entries an earlier run used are taken again as they are (insert()
  // writes every field) rather than cleared and rebuilt at each reset().
  if (pool_used_ == pool_.size()) pool_.emplace_back();
  return static_cast<uint32_t>(pool_used_++);
}

void TensorMap::reset() {
  for (uint32_t i : touched_) buckets_[i] = Bucket();
  touched_.clear();
  last_ = nullptr;
  pool_used_ = 0;
  free_head_ = kNil;
  used_ = 0;
  entries_ = 0;
}

void TensorMap::resize_table(uint64_t capacity) {
  buckets_.clear();
  buckets_.resize(capacity);
  shift_ = 64;
  while ((uint64_t{1} << (64 - shift_)) < capacity) --shift_;
}

TensorMap::Bucket& TensorMap::add(uint64_t base) {
  if ((used_ + 1) * 2 > buckets_.size()) grow();
  uint64_t mask = buckets_.size() - 1;
  for (uint64_t i = home_of(base, shift_);; i = (i + 1) & mask) {
    Bucket& b = buckets_[i];
    if (!b.used) {
      b.used = true;
      b.base = base;
      ++used_;
      touched_.push_back(static_cast<uint32_t>(i));
      last_ = &b;
      return b;
    }
  }
}

uint32_t TensorMap::purge(uint32_t* head) {
  uint32_t survivors = 0;
  uint32_t* link = head;
  while (*link != kNil) {
    uint32_t i = *link;
    if (!live(pool_[i])) {
      *link = pool_[i].next;
      free_entry(i);
    } else {
      ++survivors;
      link = &pool_[i].next;
    }
  }
  return survivors;
}

uint32_t TensorMap::purge(WriterIndex& index) {
  StartIndex& ix = index.by_start;
  for (StartIndex::Pos it = ix.begin(); !ix.at_end(it);) {
    const uint32_t i = ix.entry(it);
    if (!live(pool_[i])) {
      free_entry(i);
      it = ix.erase(it);
    } else {
      it = ix.next(it);
    }
  }
  return static_cast<uint32_t>(ix.size());
}

void TensorMap::build_index(Bucket& b) {
  auto x = std::make_unique<WriterIndex>();
  for (uint32_t i = b.writers; i != kNil;) {
    const uint32_t next = pool_[i].next;
    const Entry& e = pool_[i];
    if (live(e)) {
      x->by_start.add(first_byte(e.view), first_byte(e.view) + e.view.extent_bytes(), i);
      x->max_span = std::max(x->max_span, e.view.extent_bytes());
    } else {
      free_entry(i);
    }
    i = next;
  }
  b.writers = kNil;
  b.writer_count = static_cast<uint32_t>(x->by_start.size());
  b.index = std::move(x);
}

void TensorMap::grow() {
  // Drop buckets with no live entries, then rehash into a table at least
  // four times the surviving count.
  last_ = nullptr;
  std::vector<Bucket> old;
  old.swap(buckets_);
  uint64_t survivors = 0;
  for (Bucket& b : old) {
    if (!b.used) continue;
    b.writer_count = b.index ? purge(*b.index) : purge(&b.writers);
    b.reader_count = purge(&b.readers);
    if (b.writer_count > 0 || b.readers != kNil) ++survivors;
  }
  uint64_t cap = 16;
  while (cap < survivors * 4 + 16) cap <<= 1;
  if (cap < old.size() && survivors * 8 > old.size()) cap = old.size();
  resize_table(cap);
  touched_.clear();
  used_ = 0;
  uint64_t mask = cap - 1;
  for (Bucket& b : old) {
    if (!b.used || (b.writer_count == 0 && b.readers == kNil)) continue;
    for (uint64_t i = home_of(b.base, shift_);; i = (i + 1) & mask) {
      if (!buckets_[i].used) {
        buckets_[i] = std::move(b);
        touched_.push_back(static_cast<uint32_t>(i));
        ++used_;
        break;
      }
    }
  }
}

void TensorMap::purge_readers(Bucket& b) {
  b.reader_count = purge(&b.readers);
  b.reader_purge_at = std::max<uint32_t>(16, b.reader_count * 2);
}

void TensorMap::add_to_index(Bucket& b, const ChipTensor& t, uint32_t i) {
  pool_[i].next = kNil;
  b.index->by_start.add(first_byte(t), first_byte(t) + t.extent_bytes(), i);
  b.index->max_span = std::max(b.index->max_span, t.extent_bytes());
  ++b.writer_count;
}

void TensorMap::index_if_long(Bucket& b) {
  // Drop dead writers first: a chain that is long only with completed
  // tasks' entries does not need an index.
  b.writer_count = purge(&b.writers);
  if (b.writer_count > kIndexWriters) build_index(b);
}

}  // namespace taskring::deps
