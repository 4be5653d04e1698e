#include "host_share.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace taskring::net {

namespace cm = kernels::comm;

namespace {

class HostSharedObject final : public node::DomainObject {
 public:
  HostSharedObject(int fd, char* view, const cm::DomainLayout& layout) : fd_(fd), view_(view), layout_(layout) {}
  ~HostSharedObject() override {
    munmap(view_, layout_.windows_off);
    close(fd_);
  }
  cm::DomainHeader* header() override { return reinterpret_cast<cm::DomainHeader*>(view_ + layout_.header_off); }
  cm::SyncBlock* sync(int rank) override { return reinterpret_cast<cm::SyncBlock*>(view_ + layout_.sync(rank)); }
  int member_fd(int) override { return fd_; }
  Status clear_for_reuse() override { return unimplemented("a domain shared by several nodes is not reused"); }

 private:
  int fd_;
  char* view_;
  cm::DomainLayout layout_;
};

}  // namespace

Expected<std::unique_ptr<node::DomainObject>> open_host_shared(int pid, int fd, const cm::DomainLayout& layout,
                                                               const std::string& name, uint64_t id) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  const std::string what = "global comm domain '" + name + "': the part that process " + std::to_string(pid) +
                           " shares on this host (" + path + ")";
  const int f = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (f < 0) return unavailable(what + " cannot be opened: " + std::strerror(errno));
  struct stat st {};
  if (fstat(f, &st) != 0 || static_cast<uint64_t>(st.st_size) != layout.total) {
    close(f);
    return unavailable(what + " is not this domain: " + std::to_string(st.st_size) + " B, expected " +
                       std::to_string(layout.total) + " B");
  }
  void* v = mmap(nullptr, layout.windows_off, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
  if (v == MAP_FAILED) {
    const int e = errno;
    close(f);
    return unavailable(what + ": mapping its header failed: " + std::strerror(e));
  }
  auto obj = std::make_unique<HostSharedObject>(f, static_cast<char*>(v), layout);
  const cm::DomainHeader& h = *obj->header();
  if (h.magic != cm::kHeaderMagic || h.id != id || h.nranks != layout.nranks || h.window_size != layout.window_size ||
      std::strncmp(h.name, name.c_str(), cm::kNameBytes - 1) != 0)
    return unavailable(what + " is not this domain (its header names another one; the creator dropped it?)");
  return std::unique_ptr<node::DomainObject>(std::move(obj));
}

}  // namespace taskring::net
