// Bounded lock-free MPMC queue of task pointers (Vyukov's sequence-number
// design): one CAS per push or pop, no allocation, head and tail on their own
// cache lines. Capacity is fixed at init; the runtime sizes it so that every
// live task fits, so push never fails in a healthy run.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace taskring::engine {

template <typename T>
class ReadyQueue {
 public:
  ReadyQueue() = default;
  ReadyQueue(const ReadyQueue&) = delete;
  ReadyQueue& operator=(const ReadyQueue&) = delete;

  // `capacity` is rounded up to a power of two.
  void init(uint64_t capacity) {
    uint64_t c = 2;
    while (c < capacity) c <<= 1;
    mask_ = c - 1;
    cells_ = std::make_unique<Cell[]>(c);
    for (uint64_t i = 0; i < c; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
    head_.store(0, std::memory_order_relaxed);
    tail_.store(0, std::memory_order_relaxed);
  }

  bool push(T* item) {
    uint64_t pos = tail_.load(std::memory_order_relaxed);
    while (true) {
      Cell& c = cells_[pos & mask_];
      uint64_t seq = c.seq.load(std::memory_order_acquire);
      int64_t diff = static_cast<int64_t>(seq) - static_cast<int64_t>(pos);
      if (diff == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          c.item = item;
          c.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;  // full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  T* pop() {
    uint64_t pos = head_.load(std::memory_order_relaxed);
    while (true) {
      Cell& c = cells_[pos & mask_];
      uint64_t seq = c.seq.load(std::memory_order_acquire);
      int64_t diff = static_cast<int64_t>(seq) - static_cast<int64_t>(pos + 1);
      if (diff == 0) {
        if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          T* item = c.item;
          c.seq.store(pos + mask_ + 1, std::memory_order_release);
          return item;
        }
      } else if (diff < 0) {
        return nullptr;  // empty
      } else {
        pos = head_.load(std::memory_order_relaxed);
      }
    }
  }

  // Approximate: exact only when no push/pop is in flight.
  bool empty_hint() const {
    return head_.load(std::memory_order_acquire) >= tail_.load(std::memory_order_acquire);
  }

 private:
  struct Cell {
    std::atomic<uint64_t> seq{0};
    T* item = nullptr;
  };
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<uint64_t> tail_{0};
  alignas(64) uint64_t mask_ = 0;
  std::unique_ptr<Cell[]> cells_;
};

}  // namespace taskring::engine
