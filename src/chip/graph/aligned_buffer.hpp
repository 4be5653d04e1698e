// A growable byte buffer whose base is 64-byte aligned, for images that hold
// ChipTensor (alignas(64)) records and are copied to the device as bytes.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "taskring/base/align.hpp"

namespace taskring::graph {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  ~AlignedBuffer() { std::free(data_); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  AlignedBuffer(AlignedBuffer&& o) noexcept { swap(o); }
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    swap(o);
    return *this;
  }

  // Zero-filled `bytes`; false when memory is exhausted.
  bool assign_zero(uint64_t bytes) {
    if (bytes > capacity_) {
      uint64_t cap = align_up(bytes, 64);
      void* p = std::aligned_alloc(64, cap);
      if (p == nullptr) return false;
      std::free(data_);
      data_ = static_cast<uint8_t*>(p);
      capacity_ = cap;
    }
    size_ = bytes;
    if (bytes > 0) std::memset(data_, 0, bytes);
    return true;
  }
  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  template <typename T>
  T* at(uint64_t offset) {
    return reinterpret_cast<T*>(data_ + offset);
  }
  template <typename T>
  const T* at(uint64_t offset) const {
    return reinterpret_cast<const T*>(data_ + offset);
  }

 private:
  void swap(AlignedBuffer& o) {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
  }
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0, capacity_ = 0;
};

}  // namespace taskring::graph
