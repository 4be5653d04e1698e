#include "chip_knobs.hpp"

#include "taskring/base/knob_table.hpp"

namespace taskring {

Expected<ChipKnobs> read_chip_knobs(const EnvLookup& env) {
  ChipKnobs k;
  TASKRING_ASSIGN_OR_RETURN(auto stall, read_int_knob(env, knob("TASKRING_STALL_TIMEOUT_MS")));
  if (stall) k.stall_timeout_ms = static_cast<uint64_t>(*stall);
  TASKRING_ASSIGN_OR_RETURN(auto tw, read_int_knob(env, knob("TASKRING_TENSOR_WAIT_TIMEOUT_MS")));
  if (tw) k.tensor_wait_timeout_ms = static_cast<uint64_t>(*tw);
  TASKRING_ASSIGN_OR_RETURN(auto rt, read_int_knob(env, knob("TASKRING_RUN_TIMEOUT_MS")));
  if (rt) k.run_timeout_ms = static_cast<uint64_t>(*rt);
  TASKRING_ASSIGN_OR_RETURN(auto arena, read_int_knob(env, knob("TASKRING_GRAPH_ARENA_BYTES")));
  if (arena) k.graph_arena_bytes = static_cast<uint64_t>(*arena);
  TASKRING_ASSIGN_OR_RETURN(auto skip, read_bool_knob(env, knob("TASKRING_SKIP_DEVICE_RUN")));
  k.skip_device_run = skip.value_or(false);
  TASKRING_ASSIGN_OR_RETURN(auto profile, read_bool_knob(env, knob("TASKRING_PROFILE")));
  k.profile = profile.value_or(false);
  TASKRING_ASSIGN_OR_RETURN(auto run_inline, read_bool_knob(env, knob("TASKRING_RUN_INLINE")));
  k.run_inline = run_inline.value_or(false);
  k.run_inline_set = run_inline.has_value();
  TASKRING_ASSIGN_OR_RETURN(auto rank, read_int_knob(env, knob("TASKRING_RANK")));
  if (rank) k.rank = static_cast<int>(*rank);
  TASKRING_ASSIGN_OR_RETURN(k.sanitize, sanitize::read_sanitize_mode(env));
  return k;
}

}  // namespace taskring
