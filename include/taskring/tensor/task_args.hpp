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
//
// Upstream spellings kept for orchestration sources: `tensor(i).ref()`,
// variadic `add_input/add_output/add_inout/add_no_dep/add_scalar`,
// `launch_spec.set_block_num()` (a2a3) / `set_core_num()` (a5),
// `set_predicate`, `set_allow_early_resolve`, `set_task_timing_slot`,
// `reset()`, `dump()`. Everything here is inline: an orchestration shared
// library links nothing from taskring.
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

constexpr std::string_view tensor_arg_type_name(TensorArgType t) {
  switch (t) {
    case TensorArgType::INPUT: return "INPUT";
    case TensorArgType::OUTPUT: return "OUTPUT";
    case TensorArgType::INOUT: return "INOUT";
    case TensorArgType::OUTPUT_EXISTING: return "OUTPUT_EXISTING";
    case TensorArgType::NO_DEP: return "NO_DEP";
  }
  return "INVALID";
}

// Explicit dependency kinds (bit flags).
enum DepFlags : uint8_t {
  DEP_WAIT = 1,    // ordering: the consumer waits for the producer to complete
  DEP_RETAIN = 2,  // lifetime: the producer's slot and outputs stay alive until the consumer completes
};
// Combined kinds stay DepFlags, so `cond ? DEP_WAIT : (DEP_WAIT | DEP_RETAIN)` is one (as upstream).
constexpr DepFlags operator|(DepFlags a, DepFlags b) {
  return static_cast<DepFlags>(static_cast<uint8_t>(a) | static_cast<uint8_t>(b));
}

// SPMD launch shape of a task.
//
// Both upstream spellings of the block count are offered: `block_num()` /
// `set_block_num()` (a2a3) and `core_num()` / `set_core_num()` (a5). A source
// that picks one by SFINAE (both overloads viable would be ambiguous) is
// compiled for one architecture (`taskring orch --arch`), which keeps only
// the spelling of that architecture's header for the runtime:
//   TASKRING_ORCH_ARCH_A2A3                            block_num
//   TASKRING_ORCH_ARCH_A5 (tensormap_and_ringbuffer)   core_num
//   TASKRING_ORCH_ARCH_A5 + TASKRING_ORCH_RUNTIME_HBG  block_num (upstream's
//                                                      a5 host_build_graph)
// `blocks()` / `set_blocks()` are taskring's own spelling, always present.
#if defined(TASKRING_ORCH_ARCH_A5) && !defined(TASKRING_ORCH_RUNTIME_HBG)
#define TASKRING_LAUNCH_SPEC_CORE_NUM_ONLY_ 1
#elif defined(TASKRING_ORCH_ARCH_A2A3) || defined(TASKRING_ORCH_ARCH_A5)
#define TASKRING_LAUNCH_SPEC_BLOCK_NUM_ONLY_ 1
#endif
class LaunchSpec {
 public:
  constexpr LaunchSpec() = default;

  int16_t blocks() const { return block_num_; }
  void set_blocks(int16_t n) { block_num_ = n; }
#if !defined(TASKRING_LAUNCH_SPEC_CORE_NUM_ONLY_)
  int16_t block_num() const { return block_num_; }
  void set_block_num(int16_t n) { block_num_ = n; }
#endif
#if !defined(TASKRING_LAUNCH_SPEC_BLOCK_NUM_ONLY_)
  int16_t core_num() const { return block_num_; }
  void set_core_num(int16_t n) { block_num_ = n; }
#endif
  // All blocks must start together; more blocks than cores of the task's
  // kind fails the run with REQUIRE_SYNC_START_INVALID (7).
  bool require_sync_start() const { return require_sync_start_; }
  void set_require_sync_start(bool v) { require_sync_start_ = v; }

 private:
  int16_t block_num_ = 1;  // blocks of this task; each sees its block index
  bool require_sync_start_ = false;
};
using PTO2LaunchSpec = LaunchSpec;

// Newer upstream's locality hint of a task or scope (which die it should run
// on). The simulated chip has one die: recorded only, no effect on placement
// or ordering.
enum class TaskDomain : uint8_t { GLOBAL = 0, DIE0 = 1, DIE1 = 2 };

// Comparison of a dispatch predicate (upstream values).
enum class PredicateOp : uint8_t { NONE = 0, EQ, NE, GT, LT, GE, LE };

// The element a predicate reads: `tensor` at `indices` (ndims entries), as
// for get_tensor_data. The tensor must outlive the submit, and its producer
// must be a dependency of the predicated task.
struct CorePredicateOperand {
  const ChipTensor* tensor = nullptr;
  uint32_t ndims = 0;
  uint32_t indices[MAX_TENSOR_DIMS] = {};
};

// `operand OP target`, evaluated when the task is ready to run. A false
// predicate retires the task without running its kernels (its outputs keep
// their previous contents); consumers are released as usual. op == NONE:
// always run.
struct CoreTaskPredicate {
  CorePredicateOperand operand;
  PredicateOp op = PredicateOp::NONE;
  int64_t target = 0;
};

// Evaluates `op` on the element at `elem` (elem_size bytes, little-endian,
// sign-extended to 64 bits as upstream does) against `target`.
inline bool predicate_passes(PredicateOp op, const void* elem, size_t elem_size, int64_t target) {
  uint64_t raw = 0;
  std::memcpy(&raw, elem, elem_size < 8 ? elem_size : 8);
  int64_t v = static_cast<int64_t>(raw);
  if (elem_size < 8) {
    const unsigned shift = 64u - static_cast<unsigned>(elem_size) * 8u;
    v = static_cast<int64_t>(raw << shift) >> shift;
  }
  switch (op) {
    case PredicateOp::EQ: return v == target;
    case PredicateOp::NE: return v != target;
    case PredicateOp::GT: return v > target;
    case PredicateOp::LT: return v < target;
    case PredicateOp::GE: return v >= target;
    case PredicateOp::LE: return v <= target;
    case PredicateOp::NONE: break;
  }
  return true;
}

inline constexpr int32_t NUM_TASK_TIMING_SLOTS = 16;
inline constexpr int32_t TASK_TIMING_SLOT_NONE = -1;

namespace args_detail {
// What ref() yields for a slot that holds no ChipTensor (an OUTPUT's create
// info): a poisoned descriptor that every submit rejects.
inline const ChipTensor& no_tensor() {
  static const ChipTensor kPoisoned = [] {
    ChipTensor t;
    t.poison = ViewError::kOutOfRange;
    return t;
  }();
  return kPoisoned;
}
}  // namespace args_detail

// One tensor slot of a TaskArgs, as `args.tensor(i)` returns it: `.ref()`
// (upstream) or `*` / `->` give the ChipTensor; `.create_info()` the
// TensorCreateInfo of an OUTPUT slot. Converts to `const ChipTensor*`
// (nullptr for an OUTPUT slot).
class TensorRef {
 public:
  TensorRef(const ChipTensor* tensor, const TensorCreateInfo* create_info)
      : tensor_(tensor), create_info_(create_info) {}

  // The tensor; a poisoned descriptor for an OUTPUT slot.
  const ChipTensor& ref() const { return tensor_ != nullptr ? *tensor_ : args_detail::no_tensor(); }
  const ChipTensor& operator*() const { return ref(); }
  const ChipTensor* operator->() const { return tensor_; }
  operator const ChipTensor*() const { return tensor_; }  // NOLINT: pointer-like on purpose
  // The create info of an OUTPUT slot; nullptr otherwise.
  const TensorCreateInfo* create_info() const { return create_info_; }
  bool refers_to(const ChipTensor* t) const { return tensor_ == t; }
  bool refers_to(const TensorCreateInfo* ci) const { return create_info_ == ci; }

 private:
  const ChipTensor* tensor_;
  const TensorCreateInfo* create_info_;
};

template <int kMaxTensors, int kMaxScalars>
class TaskArgs {
 public:
  static constexpr int kTensorCapacity = kMaxTensors;
  static constexpr int kScalarCapacity = kMaxScalars;

  // Only the message's first byte is set: a submit builds one TaskArgs per
  // task, and zeroing the 160-byte buffer cost a fifth of the argument set-up.
  TaskArgs() { error_[0] = '\0'; }
  TaskArgs(const TaskArgs&) = delete;
  TaskArgs& operator=(const TaskArgs&) = delete;

  // Adds each argument as INPUT / INOUT / NO_DEP (upstream: variadic). The
  // tensors are held by pointer, so temporaries do not compile.
  template <typename... Ts>
  TaskArgs& add_input(Ts&&... ts) {
    check_tensor_pack<false, Ts...>();
    (add(&ts, TensorArgType::INPUT, "add_input"), ...);
    return *this;
  }
  template <typename... Ts>
  TaskArgs& add_inout(Ts&&... ts) {
    check_tensor_pack<false, Ts...>();
    (add(&ts, TensorArgType::INOUT, "add_inout"), ...);
    return *this;
  }
  template <typename... Ts>
  TaskArgs& add_no_dep(Ts&&... ts) {
    check_tensor_pack<false, Ts...>();
    (add(&ts, TensorArgType::NO_DEP, "add_no_dep"), ...);
    return *this;
  }
  // All TensorCreateInfo: tensors the runtime allocates (OUTPUT). All
  // ChipTensor: existing tensors the task writes (OUTPUT_EXISTING).
  template <typename... Ts>
  TaskArgs& add_output(Ts&&... ts) {
    check_tensor_pack<true, Ts...>();
    if constexpr ((std::is_same_v<std::remove_cvref_t<Ts>, TensorCreateInfo> && ...)) {
      (add(&ts, TensorArgType::OUTPUT, "add_output"), ...);
    } else {
      (add(&ts, TensorArgType::OUTPUT_EXISTING, "add_output"), ...);
    }
    return *this;
  }
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
  void add_tensor(const ChipTensor&&, TensorArgType) = delete;

  // Adds scalars, each stored as its bytes zero-extended to 64 bits (upstream
  // `to_u64`): int32_t(-1) is 0x00000000ffffffff, 1.0f is 0x3f800000, a
  // double keeps its 64 bits; pointers are stored as their address. All or
  // none: a batch that would exceed the capacity adds nothing.
  template <typename... Ts>
  TaskArgs& add_scalar(Ts... values) {
    static_assert(sizeof...(Ts) >= 1, "add_scalar: at least one value");
    static_assert(((std::is_arithmetic_v<Ts> || std::is_enum_v<Ts> || std::is_pointer_v<Ts>)&&...),
                  "scalars are integers, floats, enums or pointers");
    if (has_error_) return *this;
    if (scalar_count_ + static_cast<int>(sizeof...(Ts)) > kMaxScalars) {
      return failf("add_scalar: scalar capacity %d exceeded (container holds at most %d scalars)", kMaxScalars,
                   kMaxScalars);
    }
    (push_scalar(scalar_bits(values), "add_scalar"), ...);
    return *this;
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
    return copy_scalars_from(other, 0, other.scalar_count());
  }
  // Scalars [offset, offset + count) of `other` (upstream spelling).
  template <int T2, int S2>
  TaskArgs& copy_scalars_from(const TaskArgs<T2, S2>& other, int offset, int count) {
    if (offset < 0 || count < 0 || offset + count > other.scalar_count()) {
      return failf("copy_scalars_from: range [%d, %d) outside the source's %d scalars", offset, offset + count,
                   other.scalar_count());
    }
    for (int i = 0; i < count && !has_error_; ++i) push_scalar(other.scalar(offset + i), "copy_scalars_from");
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

  // Dispatch predicate (see CoreTaskPredicate); op NONE clears it.
  TaskArgs& set_predicate(const CoreTaskPredicate& pred) {
    predicate_ = pred;
    return *this;
  }
  const CoreTaskPredicate& predicate() const { return predicate_; }

  // Upstream's speculative early-dispatch hint. Recorded only: sim has no
  // doorbell stage to overlap, so the task runs when its producers finish.
  TaskArgs& set_allow_early_resolve(bool v = true) {
    allow_early_resolve_ = v;
    return *this;
  }
  bool allow_early_resolve() const { return allow_early_resolve_; }

  // Newer upstream's per-task locality hint; recorded only (see TaskDomain).
  TaskArgs& set_task_domain(TaskDomain d) {
    task_domain_ = d;
    return *this;
  }
  TaskDomain task_domain() const { return task_domain_; }

  // Tags the task for upstream's selective task timing (slot 0..15). An
  // out-of-range slot is latched as an error. Recorded only: taskring's
  // STRACE spans time every task.
  TaskArgs& set_task_timing_slot(int32_t slot) {
    if (slot < 0 || slot >= NUM_TASK_TIMING_SLOTS) {
      return failf("set_task_timing_slot: slot %d out of range (valid: 0..15)", slot);
    }
    task_timing_slot_ = slot;
    return *this;
  }
  int32_t task_timing_slot() const { return task_timing_slot_; }

  // Upstream's DFX argument-dump marker: a no-op (taskring records no
  // argument dumps). Takes tensors and scalars already added.
  template <typename... Ts>
  void dump(Ts&&... values) const {
    ((void)values, ...);
  }

  // ---- reading ----
  int tensor_count() const { return tensor_count_; }
  int scalar_count() const { return scalar_count_; }
  TensorArgType tag(int i) const { return tags_[i]; }
  // Slot i: `.ref()` / `*` / `->` give its ChipTensor; converts to
  // `const ChipTensor*`, nullptr for an OUTPUT slot.
  TensorRef tensor(int i) const {
    return tags_[i] == TensorArgType::OUTPUT ? TensorRef(nullptr, static_cast<const TensorCreateInfo*>(ptrs_[i]))
                                             : TensorRef(static_cast<const ChipTensor*>(ptrs_[i]), nullptr);
  }
  // The TensorCreateInfo of OUTPUT argument i; nullptr otherwise.
  const TensorCreateInfo* create_info(int i) const {
    return tags_[i] == TensorArgType::OUTPUT ? static_cast<const TensorCreateInfo*>(ptrs_[i]) : nullptr;
  }
  // Scalar slot i; `scalar<T>(i)` reinterprets its low sizeof(T) bytes.
  template <typename T = uint64_t>
  T scalar(int i) const {
    return from_u64<T>(scalars_[i]);
  }
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
    predicate_ = CoreTaskPredicate();
    allow_early_resolve_ = false;
    task_domain_ = TaskDomain::GLOBAL;
    task_timing_slot_ = TASK_TIMING_SLOT_NONE;
  }
  // Upstream spelling: clear() and drop the latched error.
  void reset() { clear(); }

 private:
  // Compile-time checks of a variadic add: at least one argument, lvalues
  // only (the container keeps pointers), and the right element types.
  template <bool kOutput, typename... Ts>
  static constexpr void check_tensor_pack() {
    static_assert(sizeof...(Ts) >= 1, "at least one tensor argument");
    static_assert((std::is_lvalue_reference_v<Ts> && ...),
                  "temporaries are not allowed: the container keeps a pointer to each tensor");
    if constexpr (kOutput) {
      static_assert((std::is_same_v<std::remove_cvref_t<Ts>, ChipTensor> && ...) ||
                        (std::is_same_v<std::remove_cvref_t<Ts>, TensorCreateInfo> && ...),
                    "add_output: all ChipTensor (OUTPUT_EXISTING) or all TensorCreateInfo (OUTPUT)");
    } else {
      static_assert((std::is_same_v<std::remove_cvref_t<Ts>, ChipTensor> && ...), "arguments must be ChipTensor");
    }
  }
  template <typename T>
  static uint64_t scalar_bits(T value) {
    if constexpr (std::is_pointer_v<T>) {
      return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(value));
    } else {
      return to_u64(value);
    }
  }

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
  char error_[160];  // a C string: valid up to its terminator
  CoreTaskPredicate predicate_;
  bool allow_early_resolve_ = false;
  TaskDomain task_domain_ = TaskDomain::GLOBAL;
  int32_t task_timing_slot_ = TASK_TIMING_SLOT_NONE;
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
