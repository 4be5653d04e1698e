#include "window_exchange.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace taskring::node {

namespace cm = kernels::comm;

namespace {

class MemfdObject final : public DomainObject {
 public:
  MemfdObject(int fd, char* view, uint64_t view_bytes, const cm::DomainLayout& layout)
      : fd_(fd), view_(view), view_bytes_(view_bytes), layout_(layout) {}
  ~MemfdObject() override {
    munmap(view_, view_bytes_);
    if (windows_ != nullptr) munmap(windows_, windows_bytes());
    close(fd_);
  }
  cm::DomainHeader* header() override { return reinterpret_cast<cm::DomainHeader*>(view_ + layout_.header_off); }
  cm::SyncBlock* sync(int rank) override { return reinterpret_cast<cm::SyncBlock*>(view_ + layout_.sync(rank)); }
  int member_fd(int) override { return fd_; }

  Status clear_for_reuse() override {
    if (windows_ == nullptr) {
      // Mapped on the first reuse only: a domain allocated once never costs
      // the parent the faults of touching its windows.
      void* v = mmap(nullptr, windows_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                     static_cast<off_t>(layout_.windows_off));
      if (v == MAP_FAILED)
        return unavailable("comm domain '" + std::string(header()->name) +
                           "': mapping its windows for reuse failed: " + std::strerror(errno));
      windows_ = static_cast<char*>(v);
    }
    std::memset(windows_, 0, static_cast<size_t>(layout_.window_size * static_cast<uint64_t>(layout_.nranks)));
    std::memset(view_ + layout_.sync_off, 0, static_cast<size_t>(layout_.windows_off - layout_.sync_off));
    return Status::Ok();
  }

 private:
  uint64_t windows_bytes() const { return layout_.total - layout_.windows_off; }

  int fd_;
  char* view_;
  uint64_t view_bytes_;
  cm::DomainLayout layout_;
  char* windows_ = nullptr;  // the parent's view of the windows (and rings), once reused
};

class MemfdExchange final : public WindowExchange {
 public:
  Expected<std::unique_ptr<DomainObject>> create(const cm::DomainLayout& layout, const std::string& name,
                                                 uint64_t id) override {
    const std::string what = "comm domain '" + name + "'";
    const int fd = memfd_create(("taskring-domain-" + name).c_str(), MFD_CLOEXEC);
    if (fd < 0) return unavailable(what + ": memfd_create failed: " + std::strerror(errno));
    if (ftruncate(fd, static_cast<off_t>(layout.total)) != 0) {
      const int e = errno;
      close(fd);
      return unavailable(what + ": sizing its " + std::to_string(layout.total) + " B failed: " + std::strerror(e));
    }
    // The parent maps the header and the sync blocks; the windows only once
    // it clears them for a reuse (clear_for_reuse).
    void* v = mmap(nullptr, layout.windows_off, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (v == MAP_FAILED) {
      const int e = errno;
      close(fd);
      return unavailable(what + ": mapping its header failed: " + std::strerror(e));
    }
    auto obj = std::make_unique<MemfdObject>(fd, static_cast<char*>(v), layout.windows_off, layout);
    cm::DomainHeader* h = obj->header();
    h->magic = cm::kHeaderMagic;
    h->nranks = layout.nranks;
    h->window_size = layout.window_size;
    h->id = id;
    std::strncpy(h->name, name.c_str(), cm::kNameBytes - 1);
    return std::unique_ptr<DomainObject>(std::move(obj));
  }

  Expected<char*> map_member(int fd, uint64_t bytes) override {
    void* v = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int e = errno;
    close(fd);
    if (v == MAP_FAILED)
      return unavailable("mapping the domain's " + std::to_string(bytes) + " B failed: " + std::strerror(e));
    return static_cast<char*>(v);
  }

  void unmap_member(char* base, uint64_t bytes) override { munmap(base, bytes); }
};

}  // namespace

std::unique_ptr<WindowExchange> make_memfd_window_exchange() { return std::make_unique<MemfdExchange>(); }

}  // namespace taskring::node
