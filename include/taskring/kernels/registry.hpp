// KernelRegistry: func id -> kernel entry point, looked up on the dispatch path.
//
// Func ids are 0 .. TASKRING_MAX_FUNC_ID-1 (1024). Ids from
// builtin_ids.hpp's kBuiltinBase up are reserved for the built-in kernels;
// user kernels take the ids below it (nothing enforces this: a collision is
// simply an ALREADY_EXISTS error at registration).
//
// Thread safety: register and load while no one dispatches (at init).
// `find` / `lookup` / `name` are then safe from any number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "taskring/base/expected.hpp"
#include "taskring/base/status.hpp"
#include "taskring/kernels/kernel_abi.h"

namespace taskring::kernels {

class KernelRegistry {
 public:
  KernelRegistry();
  ~KernelRegistry();  // dlcloses the libraries it loaded
  KernelRegistry(const KernelRegistry&) = delete;
  KernelRegistry& operator=(const KernelRegistry&) = delete;
  KernelRegistry(KernelRegistry&&) noexcept;
  KernelRegistry& operator=(KernelRegistry&&) noexcept;

  // Registers `fn` under `func_id` with a display name used in error
  // messages. Errors: OUT_OF_RANGE for an id outside 0..1023,
  // INVALID_ARGUMENT for a null `fn`, ALREADY_EXISTS when the id is taken.
  Status register_kernel(int32_t func_id, taskring_kernel_fn fn, std::string_view name);

  // dlopens `path` (RTLD_NOW | RTLD_LOCAL) and registers its `symbol`
  // (default "kernel_entry") under `func_id`; the name defaults to the path.
  // Errors: those of register_kernel (checked before loading), NOT_FOUND
  // carrying dlerror()'s text when the library or the symbol is missing.
  Status load_library(int32_t func_id, const std::string& path, std::string_view name = {},
                      const char* symbol = "kernel_entry");

  // The entry point of `func_id`, or nullptr when unknown or out of range.
  // O(1): one bounds check and one array load.
  taskring_kernel_fn find(int32_t func_id) const noexcept {
    return static_cast<uint32_t>(func_id) < TASKRING_MAX_FUNC_ID ? fns_[func_id] : nullptr;
  }

  // As find(), but an unknown or out-of-range id is a NOT_FOUND /
  // OUT_OF_RANGE error naming the id.
  Expected<taskring_kernel_fn> lookup(int32_t func_id) const;

  // The display name of `func_id`; empty when unknown.
  std::string_view name(int32_t func_id) const;

  // Number of registered ids.
  int32_t size() const { return count_; }

 private:
  struct Names;
  std::unique_ptr<taskring_kernel_fn[]> fns_;
  std::unique_ptr<Names> names_;  // names and dlopen handles, off the hot array
  int32_t count_ = 0;
};

}  // namespace taskring::kernels
