#include "taskring/kernels/registry.hpp"

#include <dlfcn.h>

#include <string>
#include <vector>

namespace taskring::kernels {

struct KernelRegistry::Names {
  std::string names[TASKRING_MAX_FUNC_ID];
  std::vector<void*> handles;
};

KernelRegistry::KernelRegistry()
    : fns_(new taskring_kernel_fn[TASKRING_MAX_FUNC_ID]()), names_(std::make_unique<Names>()) {}

KernelRegistry::~KernelRegistry() {
  if (!names_) return;
  for (void* h : names_->handles) dlclose(h);
}

KernelRegistry::KernelRegistry(KernelRegistry&&) noexcept = default;
KernelRegistry& KernelRegistry::operator=(KernelRegistry&& other) noexcept {
  if (this != &other) {
    if (names_)
      for (void* h : names_->handles) dlclose(h);
    fns_ = std::move(other.fns_);
    names_ = std::move(other.names_);
    count_ = other.count_;
    other.count_ = 0;
  }
  return *this;
}

namespace {
Status check_id(int32_t func_id) {
  if (func_id < 0 || func_id >= TASKRING_MAX_FUNC_ID)
    return out_of_range("kernel func id " + std::to_string(func_id) + " outside 0.." +
                        std::to_string(TASKRING_MAX_FUNC_ID - 1));
  return Status::Ok();
}
}  // namespace

Status KernelRegistry::register_kernel(int32_t func_id, taskring_kernel_fn fn, std::string_view name) {
  TASKRING_RETURN_IF_ERROR(check_id(func_id));
  if (fn == nullptr)
    return invalid_argument("kernel '" + std::string(name) + "' (func " + std::to_string(func_id) +
                            "): null entry point");
  if (fns_[func_id] != nullptr)
    return Status(StatusCode::kAlreadyExists, "kernel func id " + std::to_string(func_id) + " ('" + std::string(name) +
                                                  "') is already registered as '" + names_->names[func_id] + "'");
  fns_[func_id] = fn;
  names_->names[func_id] = std::string(name);
  ++count_;
  return Status::Ok();
}

Status KernelRegistry::load_library(int32_t func_id, const std::string& path, std::string_view name,
                                    const char* symbol) {
  TASKRING_RETURN_IF_ERROR(check_id(func_id));
  std::string display = name.empty() ? path : std::string(name);
  if (fns_[func_id] != nullptr)
    return Status(StatusCode::kAlreadyExists, "kernel func id " + std::to_string(func_id) + " ('" + display +
                                                  "') is already registered as '" + names_->names[func_id] + "'");
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return not_found("kernel func id " + std::to_string(func_id) + ": cannot load '" + path +
                     "': " + (err ? err : "unknown dlopen error"));
  }
  dlerror();
  void* sym = dlsym(handle, symbol);
  const char* err = dlerror();
  if (sym == nullptr || err != nullptr) {
    std::string text = err ? err : "symbol is null";
    dlclose(handle);
    return not_found("kernel func id " + std::to_string(func_id) + ": '" + path + "' has no '" + symbol + "': " + text);
  }
  Status s = register_kernel(func_id, reinterpret_cast<taskring_kernel_fn>(sym), display);
  if (!s.ok()) {
    dlclose(handle);
    return s;
  }
  names_->handles.push_back(handle);
  return Status::Ok();
}

Expected<taskring_kernel_fn> KernelRegistry::lookup(int32_t func_id) const {
  TASKRING_RETURN_IF_ERROR(check_id(func_id));
  if (fns_[func_id] == nullptr) return not_found("no kernel registered under func id " + std::to_string(func_id));
  return fns_[func_id];
}

std::string_view KernelRegistry::name(int32_t func_id) const {
  if (static_cast<uint32_t>(func_id) >= TASKRING_MAX_FUNC_ID || !names_) return {};
  return names_->names[func_id];
}

}  // namespace taskring::kernels
