// Bounded lock-free MPMC queue of task pointers (Vyukov's sequence-number
// design): one CAS per push or pop, no allocation, head and tail on their own
// cache lines. Capacity is fixed at init; the runtime sizes it so that every
// live task fits, so push never fails in a healthy run.
//
// The cells live in fresh anonymous memory, committed page by page on first
// touch: a cell stores its sequence number minus its own index, so a zero
// page already is the initial state (cell i free for position i) and init()
// writes nothing. The runtime sizes each queue for every live task (2^17
// cells, 2 MiB, at the default rings), and writing all of them up front cost
// a chip ~40 ms of page faults at its first run on a shadow-paging guest, for
// memory a run of a few tasks never reaches.
#pragma once

#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <new>

namespace taskring::l2 {

template <typename T>
class ReadyQueue {
 public:
  ReadyQueue() = default;
  ~ReadyQueue() { release(); }
  ReadyQueue(const ReadyQueue&) = delete;
  ReadyQueue& operator=(const ReadyQueue&) = delete;

  // `capacity` is rounded up to a power of two. Not concurrent with any
  // other call. std::bad_alloc when the address space is exhausted.
  void init(uint64_t capacity) {
    release();
    uint64_t c = 2;
    while (c < capacity) c <<= 1;
    void* p =
        mmap(nullptr, c * sizeof(Cell), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    cells_ = static_cast<Cell*>(p);
    mask_ = c - 1;
    head_.store(0, std::memory_order_relaxed);
    tail_.store(0, std::memory_order_relaxed);
  }

  bool push(T* item) {
    uint64_t pos = tail_.load(std::memory_order_relaxed);
    while (true) {
      Cell& c = cells_[pos & mask_];
      const uint64_t seq = load_seq(c, pos);
      const int64_t diff = static_cast<int64_t>(seq) - static_cast<int64_t>(pos);
      if (diff == 0) {
        // seq_cst: a pusher wakes parked executors without a fence of its
        // own (RunGate::notify_work_after_push), which needs the tail's move
        // in the seq_cst order before its look at the parked count.
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_seq_cst, std::memory_order_relaxed)) {
          c.item = item;
          store_seq(c, pos, pos + 1);
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
      const uint64_t seq = load_seq(c, pos);
      const int64_t diff = static_cast<int64_t>(seq) - static_cast<int64_t>(pos + 1);
      if (diff == 0) {
        if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          T* item = c.item;
          store_seq(c, pos, pos + mask_ + 1);
          return item;
        }
      } else if (diff < 0) {
        return nullptr;  // empty
      } else {
        pos = head_.load(std::memory_order_relaxed);
      }
    }
  }

  // push and pop while one thread alone uses the queue (a run whose tasks
  // all live on one thread): the same cells and counters, so the queue stays
  // consistent for concurrent use later, with a load and a store where the
  // others compare-exchange.
  bool push_alone(T* item) {
    const uint64_t pos = tail_.load(std::memory_order_relaxed);
    Cell& c = cells_[pos & mask_];
    if (load_seq(c, pos) != pos) return false;  // full
    tail_.store(pos + 1, std::memory_order_relaxed);
    c.item = item;
    store_seq(c, pos, pos + 1);
    return true;
  }
  T* pop_alone() {
    const uint64_t pos = head_.load(std::memory_order_relaxed);
    Cell& c = cells_[pos & mask_];
    if (load_seq(c, pos) != pos + 1) return nullptr;  // empty
    head_.store(pos + 1, std::memory_order_relaxed);
    T* item = c.item;
    store_seq(c, pos, pos + mask_ + 1);
    return item;
  }

  // Approximate: exact only when no push/pop is in flight.
  bool empty_hint() const {
    // seq_cst: the parking side of notify_work_after_push (a plain load on x86).
    return head_.load(std::memory_order_seq_cst) >= tail_.load(std::memory_order_seq_cst);
  }

 private:
  // Plain words in mmap'd memory (implicitly created objects), accessed
  // atomically through std::atomic_ref where the algorithm needs it.
  struct Cell {
    uint64_t seq_minus_index;
    T* item;
  };
  // Every position that maps to cell i is i + k * capacity, so the stored
  // difference is k * capacity (+1 while full): the index comes from `pos`.
  uint64_t load_seq(Cell& c, uint64_t pos) const {
    return std::atomic_ref<uint64_t>(c.seq_minus_index).load(std::memory_order_acquire) + (pos & mask_);
  }
  void store_seq(Cell& c, uint64_t pos, uint64_t seq) {
    std::atomic_ref<uint64_t>(c.seq_minus_index).store(seq - (pos & mask_), std::memory_order_release);
  }
  void release() {
    if (cells_ != nullptr) munmap(cells_, (mask_ + 1) * sizeof(Cell));
    cells_ = nullptr;
  }

  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<uint64_t> tail_{0};
  alignas(64) uint64_t mask_ = 0;
  Cell* cells_ = nullptr;
};

}  // namespace taskring::l2
