// PTO2TaskId (newer upstream: TaskId): a task's identity inside one run,
// `(ring_id << 32) | local_id`.
#pragma once

#include <cstdint>

namespace taskring {

struct PTO2TaskId {
  uint64_t raw = UINT64_MAX;

  static constexpr PTO2TaskId invalid() { return PTO2TaskId{UINT64_MAX}; }
  static constexpr PTO2TaskId make(uint32_t ring, uint32_t local) {
    return PTO2TaskId{(static_cast<uint64_t>(ring) << 32) | local};
  }
  constexpr bool is_valid() const { return raw != UINT64_MAX; }
  constexpr bool is_invalid() const { return raw == UINT64_MAX; }
  constexpr uint32_t ring() const { return static_cast<uint32_t>(raw >> 32); }
  constexpr uint32_t local() const { return static_cast<uint32_t>(raw); }
  constexpr uint32_t local_id() const { return local(); }  // newer upstream spelling
  friend constexpr bool operator==(PTO2TaskId a, PTO2TaskId b) { return a.raw == b.raw; }
};

inline constexpr PTO2TaskId kInvalidTaskId = PTO2TaskId::invalid();

}  // namespace taskring
