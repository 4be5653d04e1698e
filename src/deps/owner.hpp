// Owner: what a dependency tracker knows of the task behind an entry.
//
// Every level keeps one Owner per task and hands its address to the
// TensorMap (tensor_map.hpp): a tmr task slot embeds one (as its base), an
// L3/L4 node task is one record in DepMap's pool. The map stores the owner's
// address with the `seq` it had at insert time, so an entry is live while
//   owner->seq == entry seq   (the owner was not reused by a later task)
//   && !owner->completed      (the task has not finished).
// Nothing else of the task is read: the map never learns what a slot is.
//
// Writers: `seq` and `id` are set by the thread that submits the task,
// before the owner's first insert; `completed` is stored (release) by
// whichever thread completes the task and loaded (acquire) by the
// submitting thread's lookups.
#pragma once

#include <atomic>
#include <cstdint>

#include "taskring/tensor/task_id.hpp"

namespace taskring::deps {

struct Owner {
  uint64_t seq = 0;                    // use count of this record; never wraps (64-bit)
  PTO2TaskId id;                       // the task's id, for the caller's callbacks
  std::atomic<bool> completed{false};  // the task finished: its entries are dead
};

// Small enough that a node keeps one per task without thinking about it, and
// that a tmr slot's hot first cache line still holds its own counters.
static_assert(sizeof(Owner) <= 64, "an owner record must stay within one cache line");
static_assert(std::atomic<bool>::is_always_lock_free, "Owner::completed is read across threads without a lock");

}  // namespace taskring::deps
