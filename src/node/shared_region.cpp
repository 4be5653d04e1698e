#include "shared_region.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace taskring::node {

Expected<SharedRegion> SharedRegion::map(size_t bytes, std::string_view what) {
  if (bytes == 0) return invalid_argument(std::string(what) + ": shared region of 0 bytes");
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return unavailable(std::string(what) + ": mmap of " + std::to_string(bytes) +
                       " shared bytes failed: " + std::strerror(errno));
  }
  SharedRegion r;
  r.data_ = p;
  r.size_ = bytes;
  return r;
}

SharedRegion::~SharedRegion() { reset(); }

SharedRegion::SharedRegion(SharedRegion&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

SharedRegion& SharedRegion::operator=(SharedRegion&& o) noexcept {
  if (this != &o) {
    reset();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

void SharedRegion::reset() {
  if (data_ != nullptr) munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace taskring::node
