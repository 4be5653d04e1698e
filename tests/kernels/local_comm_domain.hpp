// Test helpers for the comm kernels in one process: a domain in ordinary
// memory laid out as a node maps it, and one thread per rank.
#pragma once

#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "taskring/kernels/comm.hpp"
#include "taskring/kernels/invoke.hpp"

namespace taskring::kernels {

namespace cm = comm;

// A domain in ordinary memory, laid out as on the node.
class LocalDomain {
 public:
  LocalDomain(int n, uint64_t window, uint64_t timeout_ms = 5000) : layout_(cm::DomainLayout::make(n, window)) {
    mem_.reset(static_cast<char*>(std::aligned_alloc(4096, layout_.total)));
    std::memset(mem_.get(), 0, layout_.total);
    auto* h = reinterpret_cast<cm::DomainHeader*>(mem_.get());
    h->magic = cm::kHeaderMagic;
    h->nranks = n;
    h->window_size = layout_.window_size;
    std::strcpy(h->name, "local");
    for (int r = 0; r < n; ++r) cm::fill_context(ctx(r), mem_.get(), layout_, r, timeout_ms * 1'000'000);
  }
  cm::CommContext* ctx(int r) { return reinterpret_cast<cm::CommContext*>(mem_.get() + layout_.context(r)); }
  uint64_t ctx_scalar(int r) { return reinterpret_cast<uintptr_t>(ctx(r)); }
  cm::DomainHeader* header() { return reinterpret_cast<cm::DomainHeader*>(mem_.get()); }
  int n() const { return layout_.nranks; }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  cm::DomainLayout layout_;
  std::unique_ptr<char, Free> mem_;
};

inline Status call(taskring_kernel_fn fn, std::vector<ChipTensor> t, std::vector<uint64_t> s) {
  KernelLocalContext ctx{};
  return invoke_kernel(fn, t.data(), static_cast<int>(t.size()), s.data(), static_cast<int>(s.size()), &ctx);
}

// Runs body(rank) on one thread per rank; the statuses by rank.
template <typename Body>
std::vector<Status> on_every_rank(int n, Body body) {
  std::vector<Status> st(static_cast<size_t>(n));
  std::vector<std::thread> th;
  for (int r = 0; r < n; ++r) th.emplace_back([&, r] { st[static_cast<size_t>(r)] = body(r); });
  for (auto& t : th) t.join();
  return st;
}

}  // namespace taskring::kernels
