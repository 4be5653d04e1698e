// TASKRING_SANITIZE=tags: each kernel may write only the bytes of its
// OUTPUT, OUTPUT_EXISTING and INOUT arguments and read only the bytes of its
// arguments (docs/sanitizer.md).
//
// Mechanism, around each block launch (tasks run one at a time: the chip
// runs inline, so no other thread of the chip touches the arena meanwhile):
//  - page protection of the whole sim arena: PROT_NONE, then the pages of
//    the task's arguments PROT_READ, the pages of its writable arguments
//    PROT_READ|PROT_WRITE. A SIGSEGV in the arena on the launching thread is
//    recorded (first fault: address, read or write), the page opened, and
//    the kernel goes on; it fails once it returns.
//  - a snapshot of the bytes on writable pages that lie outside every
//    writable view (the partial pages at a view's edges, shared with other
//    tensors or padding), compared after the launch: exact to the byte.
// Coverage: every write outside the writable views is caught (unless it
// stores the value that was there). A read is caught when it lands on a page
// that holds no byte of any argument of the task; a read of another tensor's
// bytes on a page shared with an argument is not seen. A strided view counts
// as its whole span (first to last element).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/kernel_launch.hpp"
#include "taskring/base/expected.hpp"
#include "taskring/device/device.hpp"
#include "taskring/tensor/task_args.hpp"

namespace taskring::sanitize {

// "kernel 'name' (id N)" for a one-kernel task, "kernels{aic=.., aiv0=..}"
// for a MIX one; names by func id (nullptr or short: ids only).
std::string kernel_label(const exec::LaunchTask& task, const std::vector<std::string>* names);

class TagChecker {
 public:
  // `device` must be the sim device; `arena_bytes` its arena size.
  static Expected<std::unique_ptr<TagChecker>> create(Device& device, uint64_t arena_bytes);
  ~TagChecker();
  TagChecker(const TagChecker&) = delete;
  TagChecker& operator=(const TagChecker&) = delete;

  // Kernel names by func id for the messages (nullptr or short: ids only).
  // The vector must outlive the runs that use it.
  void set_kernel_names(const std::vector<std::string>* names) { names_ = names; }

  // Runs `run(task')` (task' = `task` with its descriptors, scalars and
  // kernel ids copied out of device memory) with the protection above.
  // Returns false with `*failure` set when the launch failed or broke its
  // tags (the violation wins over a kernel error).
  template <typename Run>
  bool guard(const exec::LaunchTask& task, Run&& run, const std::string& task_name, std::string* failure) {
    const exec::LaunchTask safe = arm(task);
    const bool ok = run(safe);
    std::optional<std::string> v = disarm(safe, task_name);
    if (v) {
      *failure = std::move(*v);
      return false;
    }
    return ok;
  }

  // The signal handler's half (tag_checker.cpp): true when the fault at
  // `addr` was this checker's and is handled.
  bool on_fault(uintptr_t addr, int is_write);

 private:
  struct Span {
    uintptr_t begin, end;  // host addresses in the arena mapping
  };
  TagChecker(Device& device, char* arena, uint64_t arena_bytes) : device_(device), arena_(arena), bytes_(arena_bytes) {}

  exec::LaunchTask arm(const exec::LaunchTask& task);
  std::optional<std::string> disarm(const exec::LaunchTask& task, const std::string& task_name);
  void protect(const Span& s, int prot) const;
  std::string describe(const exec::LaunchTask& task, const std::string& task_name, uintptr_t addr, int is_write) const;

  Device& device_;
  char* arena_;
  uint64_t bytes_;
  const std::vector<std::string>* names_ = nullptr;
  // Copies of the armed task (its originals may live in device memory).
  ChipTensor tensors_[CORE_MAX_TENSOR_ARGS];
  uint64_t scalars_[CORE_MAX_SCALAR_ARGS];
  int32_t kernels_[3];
  std::vector<Span> residue_;          // bytes that must not change
  std::vector<uint8_t> residue_copy_;  // their values before the launch
  // First fault while armed (written by the signal handler on this thread).
  uintptr_t fault_addr_ = 0;
  int fault_write_ = -1;  // 1 write, 0 read, -1 unknown
  bool faulted_ = false;
  int slot_ = -1;  // in the armed array while armed (tag_checker.cpp)
};

}  // namespace taskring::sanitize
