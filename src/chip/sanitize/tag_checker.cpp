#include "tag_checker.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "arg_tag.hpp"
#include "taskring/device/sim_device.hpp"

namespace taskring::sanitize {

namespace {

constexpr uintptr_t kPage = 4096;
uintptr_t page_down(uintptr_t a) { return a & ~(kPage - 1); }
uintptr_t page_up(uintptr_t a) { return (a + kPage - 1) & ~(kPage - 1); }

// The armed checkers, each with the thread that armed it. Global because a
// signal handler has no other way to find them; a fixed array of atomics
// rather than thread-local storage because reading a thread_local of a
// dlopen'ed library (the Python module) may allocate, and a fault inside
// malloc must not deadlock. Several chips of one process may be armed at
// once, on different threads, each over its own arena.
constexpr int kMaxArmed = 64;
std::atomic<TagChecker*> g_armed[kMaxArmed];
std::atomic<long> g_armed_tid[kMaxArmed];

long this_tid() { return syscall(SYS_gettid); }
// The SIGSEGV action before ours, for faults that are not a checker's. Ours
// is installed once, by the first checker, for the life of the process.
struct sigaction g_previous;
std::once_flag g_installed;

void on_sigsegv(int sig, siginfo_t* info, void* context) {
  int is_write = -1;
#if defined(__x86_64__)
  // Page-fault error code bit 1: the access was a write.
  is_write = (static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_ERR] & 2) != 0 ? 1 : 0;
#endif
  const long tid = this_tid();
  for (int i = 0; i < kMaxArmed; ++i) {
    TagChecker* c = g_armed[i].load(std::memory_order_acquire);
    if (c != nullptr && g_armed_tid[i].load(std::memory_order_acquire) == tid &&
        c->on_fault(reinterpret_cast<uintptr_t>(info->si_addr), is_write)) {
      return;
    }
  }
  // Not ours: hand it to whoever had it, or let it kill the process.
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
    return;
  }
  signal(SIGSEGV, SIG_DFL);  // the faulting access runs again and ends the process
}

void install_handler() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = &on_sigsegv;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &g_previous);
}

// Sorted union of `spans`.
template <typename S>
std::vector<S> merged(std::vector<S> spans) {
  std::sort(spans.begin(), spans.end(), [](const S& a, const S& b) { return a.begin < b.begin; });
  std::vector<S> out;
  for (const S& s : spans) {
    if (!out.empty() && s.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, s.end);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace

Expected<std::unique_ptr<TagChecker>> TagChecker::create(Device& device, uint64_t arena_bytes) {
  if (device.name() != "sim") {
    return invalid_argument("TASKRING_SANITIZE=tags needs the sim device, not '" + std::string(device.name()) + "'");
  }
  if (sysconf(_SC_PAGESIZE) != static_cast<long>(kPage)) {
    return unimplemented("TASKRING_SANITIZE=tags needs 4 KiB pages");
  }
  char* arena = static_cast<char*>(device.device_view_unchecked(kSimDeviceAddressBase));
  if (arena == nullptr) return failed_precondition("TASKRING_SANITIZE=tags: the sim arena is not mapped");
  std::call_once(g_installed, install_handler);
  return std::unique_ptr<TagChecker>(new TagChecker(device, arena, arena_bytes));
}

TagChecker::~TagChecker() {
  if (slot_ >= 0) g_armed[slot_].store(nullptr, std::memory_order_release);
}

void TagChecker::protect(const Span& s, int prot) const {
  const uintptr_t a = page_down(s.begin), b = page_up(s.end);
  if (b > a) mprotect(reinterpret_cast<void*>(a), b - a, prot);
}

bool TagChecker::on_fault(uintptr_t addr, int is_write) {
  const uintptr_t base = reinterpret_cast<uintptr_t>(arena_);
  if (addr < base || addr - base >= bytes_) return false;
  if (!faulted_) {
    faulted_ = true;
    fault_addr_ = addr;
    fault_write_ = is_write;
  }
  // Let the kernel go on; it is failed when it returns.
  mprotect(reinterpret_cast<void*>(page_down(addr)), kPage, PROT_READ | PROT_WRITE);
  return true;
}

exec::LaunchTask TagChecker::arm(const exec::LaunchTask& task) {
  exec::LaunchTask safe = task;
  const int n = std::min(task.tensor_count, CORE_MAX_TENSOR_ARGS);
  std::copy(task.tensors, task.tensors + n, tensors_);
  std::copy(task.scalars, task.scalars + std::min(task.scalar_count, CORE_MAX_SCALAR_ARGS), scalars_);
  std::copy(task.kernels, task.kernels + 3, kernels_);
  safe.tensors = tensors_;
  safe.scalars = scalars_;
  safe.kernels = kernels_;
  std::vector<Span> readable, writable;
  for (int i = 0; i < n; ++i) {
    const ChipTensor& t = tensors_[i];
    auto* p = static_cast<char*>(device_.device_view_unchecked(t.data_addr()));
    if (p == nullptr || t.extent_bytes() == 0) continue;
    const Span s{reinterpret_cast<uintptr_t>(p), reinterpret_cast<uintptr_t>(p) + t.extent_bytes()};
    readable.push_back(s);
    std::optional<TensorArgType> tag = stamped_tag(t);
    if (tag && tag_writes(*tag)) writable.push_back(s);
  }
  writable = merged(std::move(writable));
  // The bytes on writable pages outside the writable views.
  residue_.clear();
  std::vector<Span> pages;
  for (const Span& w : writable) pages.push_back(Span{page_down(w.begin), page_up(w.end)});
  size_t wi = 0;
  for (const Span& p : merged(std::move(pages))) {
    uintptr_t at = p.begin;
    for (; wi < writable.size() && writable[wi].begin < p.end; ++wi) {
      if (writable[wi].begin > at) residue_.push_back(Span{at, writable[wi].begin});
      at = writable[wi].end;
    }
    if (at < p.end) residue_.push_back(Span{at, p.end});
  }
  residue_copy_.clear();
  for (const Span& r : residue_)
    residue_copy_.insert(residue_copy_.end(), reinterpret_cast<const uint8_t*>(r.begin),
                         reinterpret_cast<const uint8_t*>(r.end));
  faulted_ = false;
  fault_write_ = -1;
  fault_addr_ = 0;
  mprotect(arena_, bytes_, PROT_NONE);
  for (const Span& r : readable) protect(r, PROT_READ);
  for (const Span& w : writable) protect(w, PROT_READ | PROT_WRITE);
  // A slot for this launch (the array bounds how many chips may be armed at once).
  // The tid is stored after the slot is won and before the kernel runs.
  for (int i = 0; i < kMaxArmed && slot_ < 0; ++i) {
    TagChecker* none = nullptr;
    if (g_armed[i].compare_exchange_strong(none, this, std::memory_order_acq_rel)) slot_ = i;
  }
  if (slot_ >= 0) g_armed_tid[slot_].store(this_tid(), std::memory_order_release);
  return safe;
}

std::optional<std::string> TagChecker::disarm(const exec::LaunchTask& task, const std::string& task_name) {
  if (slot_ >= 0) g_armed[slot_].store(nullptr, std::memory_order_release);
  slot_ = -1;
  mprotect(arena_, bytes_, PROT_READ | PROT_WRITE);
  if (faulted_) return describe(task, task_name, fault_addr_, fault_write_);
  size_t k = 0;
  for (const Span& r : residue_) {
    const auto* now = reinterpret_cast<const uint8_t*>(r.begin);
    for (uintptr_t i = 0; i < r.end - r.begin; ++i, ++k) {
      if (now[i] != residue_copy_[k]) return describe(task, task_name, r.begin + i, 1);
    }
  }
  return std::nullopt;
}

}  // namespace taskring::sanitize
