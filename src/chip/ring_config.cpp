#include "taskring/chip/ring_config.hpp"

#include <cstdio>

#include "taskring/base/knob_table.hpp"

namespace taskring {

namespace {

bool is_pow2(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

bool in_range(const char* name, uint64_t v) {
  const KnobSpec& k = knob(name);
  return v >= static_cast<uint64_t>(k.min) && v <= static_cast<uint64_t>(k.max);
}

Status check_window(const std::string& where, uint64_t v) {
  if (!in_range("PTO2_RING_TASK_WINDOW", v) || !is_pow2(v)) {
    return invalid_argument(where + "=" + std::to_string(v) + ": task window must be a power of two in [4, 2^31]");
  }
  return Status::Ok();
}
Status check_heap(const std::string& where, uint64_t v) {
  if (!in_range("PTO2_RING_HEAP", v)) {
    return invalid_argument(where + "=" + std::to_string(v) + ": heap must be in [1024, 2^40] bytes");
  }
  return Status::Ok();
}
Status check_pool(const std::string& where, uint64_t v) {
  if (!in_range("PTO2_RING_DEP_POOL", v)) {
    return invalid_argument(where + "=" + std::to_string(v) + ": dependency pool must be in [4, 2^31] entries");
  }
  return Status::Ok();
}

Status resolve_one(const char* env_name, const char* field, const EnvLookup& env,
                   const std::array<uint64_t, kRingLevels>& overrides, uint64_t fallback,
                   Status (*check)(const std::string&, uint64_t), std::array<uint64_t, kRingLevels>* out) {
  // The knob's own range, so that a value that is no integer at all is told
  // the range that matters; `check` adds what a range cannot say (powers of two).
  const KnobSpec& spec = knob(env_name);
  TASKRING_ASSIGN_OR_RETURN(auto from_env, read_int_list_knob(env, env_name, kRingLevels, spec.min, spec.max));
  for (int r = 0; r < kRingLevels; ++r) {
    uint64_t v = fallback;
    if (from_env) {
      v = static_cast<uint64_t>((*from_env)[r]);
      TASKRING_RETURN_IF_ERROR(check(std::string(env_name) + "[ring " + std::to_string(r) + "]", v));
    }
    if (overrides[r] != 0) {
      v = overrides[r];
      TASKRING_RETURN_IF_ERROR(check(std::string("RunConfig.") + field + "[" + std::to_string(r) + "]", v));
    }
    (*out)[r] = v;
  }
  return Status::Ok();
}

}  // namespace

Expected<RingSizes> resolve_ring_sizes(const RingSizes& overrides, const EnvLookup& env) {
  RingSizes s;
  TASKRING_RETURN_IF_ERROR(resolve_one("PTO2_RING_TASK_WINDOW", "task_window", env, overrides.task_window,
                                       kDefaultTaskWindow, check_window, &s.task_window));
  TASKRING_RETURN_IF_ERROR(
      resolve_one("PTO2_RING_HEAP", "heap", env, overrides.heap, kDefaultRingHeap, check_heap, &s.heap));
  TASKRING_RETURN_IF_ERROR(
      resolve_one("PTO2_RING_DEP_POOL", "dep_pool", env, overrides.dep_pool, kDefaultDepPool, check_pool, &s.dep_pool));
  return s;
}

std::string describe_ring_sizes(const RingSizes& s) {
  std::string out;
  for (int r = 0; r < kRingLevels; ++r) {
    char buf[128];
    std::snprintf(buf, sizeof(buf), "%sring%d{window=%llu heap=%llu dep_pool=%llu}", r ? " " : "", r,
                  static_cast<unsigned long long>(s.task_window[r]), static_cast<unsigned long long>(s.heap[r]),
                  static_cast<unsigned long long>(s.dep_pool[r]));
    out += buf;
  }
  return out;
}

}  // namespace taskring
