// TaskArgs: the argument container of a task, a Graph boundary and a chip
// entry, with the upstream capacities.
//
//   CoreTaskArgs   32 tensors / 16 scalars   one task (rt_submit_*)
//   GraphTaskArgs 128 tensors / 64 scalars   one Graph boundary (rt_submit_graph)
//   ChipTaskArgs  256 tensors / 128 scalars  the orchestration entry
//
// Tensors are held by pointer: the referenced ChipTensor / TensorCreateInfo
// must outlive the submit (binding a temporary does not compile). All tensors
// come before any scalar (the kernel's argument vector is tensors, then
// scalars). Build errors never throw: the first one is latched (`has_error()`,
// `error_msg()`) and every later add is ignored; submitting a container with
// an error fails the run with INVALID_ARGS and that message.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "taskring/tensor/chip_tensor.hpp"
#include "taskring/tensor/tensor_create_info.hpp"

namespace taskring {

// How a task uses a tensor argument (upstream wire values).
enum class TensorArgType : int32_t {
  INPUT = 0,            // read; depends on its producers
  OUTPUT = 1,           // written; allocated by the runtime from a TensorCreateInfo
  INOUT = 2,            // read and written in place
  OUTPUT_EXISTING = 3,  // written into an existing tensor
  NO_DEP = 4,           // passed through; no dependency tracking beyond the creator
};

std::string_view tensor_arg_type_name(TensorArgType t);

// Explicit dependency kinds (bit flags).
enum DepFlags : uint8_t {
  DEP_WAIT = 1,    // ordering: the consumer waits for the producer to complete
  DEP_RETAIN = 2,  // lifetime: the producer's slot and outputs stay alive until the consumer completes
};

// SPMD launch shape.
struct LaunchSpec {
  int16_t block_num = 1;  // blocks of this task; each sees its block index
  bool require_sync_start = false;
};

template <int kMaxTensors, int kMaxScalars>
class TaskArgs {
 public:
  static constexpr int kTensorCapacity = kMaxTensors;
  static constexpr int kScalarCapacity = kMaxScalars;

  TaskArgs() = default;
  TaskArgs(const TaskArgs&) = delete;
  TaskArgs& operator=(const TaskArgs&) = delete;

  TaskArgs& add_input(const ChipTensor& t) { return add(&t, TensorArgType::INPUT, "add_input"); }
  TaskArgs& add_inout(const ChipTensor& t) { return add(&t, TensorArgType::INOUT, "add_inout"); }
  TaskArgs& add_no_dep(const ChipTensor& t) { return add(&t, TensorArgType::NO_DEP, "add_no_dep"); }
  // An existing tensor written by the task (OUTPUT_EXISTING).
  TaskArgs& add_output(const ChipTensor& t) { return add(&t, TensorArgType::OUTPUT_EXISTING, "add_output"); }
  // A tensor the runtime allocates (OUTPUT).
  TaskArgs& add_output(const TensorCreateInfo& ci) { return add(&ci, TensorArgType::OUTPUT, "add_output"); }
  // Adds `t` with an explicit tag. OUTPUT needs a TensorCreateInfo and is an
  // error here, as is a value that is not a TensorArgType.
  TaskArgs& add_tensor(const ChipTensor& t, TensorArgType tag) {
    if (tag == TensorArgType::OUTPUT) {
      return fail("add_tensor: OUTPUT takes a TensorCreateInfo, not an existing ChipTensor");
    }
    if (tag != TensorArgType::INPUT && tag != TensorArgType::INOUT && tag != TensorArgType::OUTPUT_EXISTING &&
        tag != TensorArgType::NO_DEP) {
      return failf("add_tensor: tag %d is not a TensorArgType (INPUT 0, INOUT 2, OUTPUT_EXISTING 3, NO_DEP 4)",
                   static_cast<int>(tag));
    }
    return add(&t, tag, "add_tensor");
  }
  void add_input(const ChipTensor&&) = delete;
  void add_inout(const ChipTensor&&) = delete;
  void add_no_dep(const ChipTensor&&) = delete;
  void add_output(const ChipTensor&&) = delete;
  void add_output(const TensorCreateInfo&&) = delete;

  // Adds one scalar, bit-cast to u64: integers are sign- or zero-extended per
  // their type, float keeps its 32-bit pattern in the low half, double its 64.
  template <typename T>
  TaskArgs& add_scalar(T value) {
    static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_pointer_v<T>,
                  "scalars are integers, floats, enums or pointers");
    uint64_t bits = 0;
    if constexpr (std::is_same_v<T, float>) {
      uint32_t b;
      std::memcpy(&b, &value, 4);
      bits = b;
    } else if constexpr (std::is_same_v<T, double>) {
      std::memcpy(&bits, &value, 8);
    } else if constexpr (std::is_pointer_v<T>) {
      bits = reinterpret_cast<uintptr_t>(value);
    } else if constexpr (std::is_enum_v<T>) {
      bits = static_cast<uint64_t>(static_cast<std::underlying_type_t<T>>(value));
    } else if constexpr (std::is_signed_v<T>) {
      bits = static_cast<uint64_t>(static_cast<int64_t>(value));
    } else {
      bits = static_cast<uint64_t>(value);
    }
    return push_scalar(bits, "add_scalar");
  }
  TaskArgs& add_scalars(const uint64_t* values, int n) {
    for (int i = 0; i < n && !has_error_; ++i) push_scalar(values[i], "add_scalars");
    return *this;
  }
  // Zero-extends each value.
  TaskArgs& add_scalars_i32(const int32_t* values, int n) {
    for (int i = 0; i < n && !has_error_; ++i) push_scalar(static_cast<uint32_t>(values[i]), "add_scalars_i32");
    return *this;
  }
  template <int T2, int S2>
  TaskArgs& copy_scalars_from(const TaskArgs<T2, S2>& other) {
    for (int i = 0; i < other.scalar_count() && !has_error_; ++i) push_scalar(other.scalar(i), "copy_scalars_from");
    return *this;
  }

  // Explicit dependencies (in addition to inferred ones). `ids` (and `flags`,
  // if given; default WAIT|RETAIN) must outlive the submit. At most once;
  // n == 0 clears.
  TaskArgs& set_dependencies(const PTO2TaskId* ids, int n) { return set_deps(ids, nullptr, n); }
  TaskArgs& set_dependencies_with_kinds(const PTO2TaskId* ids, const DepFlags* flags, int n) {
    return set_deps(ids, flags, n);
  }

  LaunchSpec launch_spec;

  // ---- reading ----
  int tensor_count() const { return tensor_count_; }
  int scalar_count() const { return scalar_count_; }
  TensorArgType tag(int i) const { return tags_[i]; }
  // The ChipTensor of argument i; nullptr for OUTPUT.
  const ChipTensor* tensor(int i) const {
    return tags_[i] == TensorArgType::OUTPUT ? nullptr : static_cast<const ChipTensor*>(ptrs_[i]);
  }
  // The TensorCreateInfo of OUTPUT argument i; nullptr otherwise.
  const TensorCreateInfo* create_info(int i) const {
    return tags_[i] == TensorArgType::OUTPUT ? static_cast<const TensorCreateInfo*>(ptrs_[i]) : nullptr;
  }
  uint64_t scalar(int i) const { return scalars_[i]; }
  const uint64_t* scalars() const { return scalars_; }
  const PTO2TaskId* dependency_ids() const { return dep_ids_; }
  const DepFlags* dependency_flags() const { return dep_flags_; }
  int dependency_count() const { return dep_count_; }

  bool has_error() const { return has_error_; }
  const char* error_msg() const { return error_; }

  // Empties the container and forgets any latched error.
  void clear() {
    tensor_count_ = scalar_count_ = dep_count_ = 0;
    dep_ids_ = nullptr;
    dep_flags_ = nullptr;
    deps_set_ = false;
    has_error_ = false;
    error_[0] = '\0';
    launch_spec = LaunchSpec();
  }

 private:
  TaskArgs& add(const void* p, TensorArgType tag, const char* op) {
    if (has_error_) return *this;
    if (scalar_count_ > 0) {
      return failf("%s: tensor argument %d added after %d scalar(s); all tensors must come before any scalar", op,
                   tensor_count_, scalar_count_);
    }
    if (tensor_count_ >= kMaxTensors) {
      return failf("%s: tensor capacity %d exceeded (container holds at most %d tensors)", op, kMaxTensors,
                   kMaxTensors);
    }
    ptrs_[tensor_count_] = p;
    tags_[tensor_count_] = tag;
    ++tensor_count_;
    return *this;
  }
  TaskArgs& push_scalar(uint64_t bits, const char* op) {
    if (has_error_) return *this;
    if (scalar_count_ >= kMaxScalars) {
      return failf("%s: scalar capacity %d exceeded (container holds at most %d scalars)", op, kMaxScalars,
                   kMaxScalars);
    }
    scalars_[scalar_count_++] = bits;
    return *this;
  }
  TaskArgs& set_deps(const PTO2TaskId* ids, const DepFlags* flags, int n) {
    if (has_error_) return *this;
    if (n < 0 || (n > 0 && ids == nullptr)) return failf("set_dependencies: bad count %d or null ids", n);
    if (n == 0) {
      dep_ids_ = nullptr;
      dep_flags_ = nullptr;
      dep_count_ = 0;
      deps_set_ = false;
      return *this;
    }
    if (deps_set_) return fail("set_dependencies: called twice without clearing (n == 0) in between");
    dep_ids_ = ids;
    dep_flags_ = flags;
    dep_count_ = n;
    deps_set_ = true;
    return *this;
  }
  TaskArgs& fail(const char* msg) { return failf("%s", msg); }
  template <typename... A>
  TaskArgs& failf(const char* fmt, A... a) {
    if (!has_error_) {
      has_error_ = true;
      std::snprintf(error_, sizeof(error_), fmt, a...);
    }
    return *this;
  }

  const void* ptrs_[kMaxTensors];
  TensorArgType tags_[kMaxTensors];
  uint64_t scalars_[kMaxScalars];
  int tensor_count_ = 0;
  int scalar_count_ = 0;
  const PTO2TaskId* dep_ids_ = nullptr;
  const DepFlags* dep_flags_ = nullptr;
  int dep_count_ = 0;
  bool deps_set_ = false;
  bool has_error_ = false;
  char error_[160] = {};
};

using CoreTaskArgs = TaskArgs<32, 16>;
using GraphTaskArgs = TaskArgs<128, 64>;
using ChipTaskArgs = TaskArgs<256, 128>;

inline constexpr int CORE_MAX_TENSOR_ARGS = 32;
inline constexpr int CORE_MAX_SCALAR_ARGS = 16;
inline constexpr int GRAPH_MAX_TENSOR_ARGS = 128;
inline constexpr int GRAPH_MAX_SCALAR_ARGS = 64;
inline constexpr int CHIP_MAX_TENSOR_ARGS = 256;
inline constexpr int CHIP_MAX_SCALAR_ARGS = 128;

// Adds explicit dependencies one by one (WAIT|RETAIN, or WAIT only).
template <int kMaxDeps = 16>
class CoreTaskArgsWithDeps : public CoreTaskArgs {
 public:
  template <typename... Ids>
  CoreTaskArgsWithDeps& add_dep(Ids... ids) {
    (push_dep(ids, static_cast<DepFlags>(DEP_WAIT | DEP_RETAIN)), ...);
    return *this;
  }
  template <typename... Ids>
  CoreTaskArgsWithDeps& add_dep_wait(Ids... ids) {
    (push_dep(ids, DEP_WAIT), ...);
    return *this;
  }

 private:
  void push_dep(PTO2TaskId id, DepFlags f) {
    if (n_ >= kMaxDeps) {
      // Reuses the latch: the next submit reports it.
      set_dependencies_with_kinds(nullptr, nullptr, -1);
      return;
    }
    ids_[n_] = id;
    flags_[n_] = f;
    ++n_;
    set_dependencies_with_kinds(nullptr, nullptr, 0);
    set_dependencies_with_kinds(ids_, flags_, n_);
  }
  PTO2TaskId ids_[kMaxDeps];
  DepFlags flags_[kMaxDeps];
  int n_ = 0;
};

}  // namespace taskring
