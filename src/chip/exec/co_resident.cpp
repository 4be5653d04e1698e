// Co-resident kernels on one executor thread: each kernel of the group is a
// Boost.Context fiber; the executor resumes them round-robin. A kernel runs
// until it returns or waits (kernel_sync.h -> kernel_wait_yield), so every
// kernel of the group starts before any other kernel of the chip runs on this
// thread, and a kernel waiting for a sibling lets that sibling progress even
// when the machine has fewer hardware threads than the group has kernels.
//
// Invariants: fibers live only inside launch_co_resident (none survives a
// call); only the executor thread that created a group resumes its fibers;
// a kernel that never waits runs from start to end in one resume, so a MIX
// task without in-kernel synchronisation behaves as the sequential launch.
#include <sched.h>

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>
#include <memory>
#include <utility>
#include <vector>

#include "device_profile.hpp"
#include "exec/kernel_launch.hpp"
#include "exec/kernel_wait.hpp"
#include "exec/launch_scratch.hpp"

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define TASKRING_FIBER_TSAN 1
#endif
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define TASKRING_FIBER_ASAN 1
#endif

namespace ctx = boost::context;

namespace taskring::exec {

namespace {

// Kernel stacks: 1 MiB with a guard page (a kernel overflowing it faults
// instead of corrupting a neighbour). Released stacks are kept per thread
// for the next group, since creating one is an mmap + mprotect.
constexpr size_t kStackBytes = size_t{1} << 20;
constexpr size_t kCachedStacks = 64;

struct StackCache {
  std::vector<ctx::stack_context> free;
  ~StackCache() {
    ctx::protected_fixedsize_stack real(kStackBytes);
    for (auto& sc : free) real.deallocate(sc);
  }
};

StackCache& stack_cache() {
  thread_local StackCache cache;  // per executor: fibers never cross threads
  return cache;
}

// The stack the last fiber constructed on this thread got (the sanitizers
// need its bounds).
thread_local ctx::stack_context t_last_stack;

class CachedStack {
 public:
  ctx::stack_context allocate() {
    StackCache& c = stack_cache();
    if (!c.free.empty()) {
      t_last_stack = c.free.back();
      c.free.pop_back();
      return t_last_stack;
    }
    t_last_stack = ctx::protected_fixedsize_stack(kStackBytes).allocate();
    return t_last_stack;
  }
  void deallocate(ctx::stack_context& sc) noexcept {
    StackCache& c = stack_cache();
    if (c.free.size() < kCachedStacks) {
      c.free.push_back(sc);
      return;
    }
    ctx::protected_fixedsize_stack(kStackBytes).deallocate(sc);
  }
};

struct Member {
  LaunchScratch scratch;
  ctx::fiber fiber;  // the kernel's continuation while it is suspended
  ctx::fiber sink;   // the scheduler's continuation while the kernel runs
  taskring_kernel_fn fn = nullptr;
  uint64_t deadline_ns = 0;
  uint64_t started = 0, ended = 0;  // profile stamps
  int block = 0, slot = 0, cluster = 0;
  bool done = false;
  ctx::stack_context stack;  // for the sanitizers
  void* tsan_fiber = nullptr;
  void* asan_fake_stack = nullptr;
};

struct Group {
  std::vector<std::unique_ptr<Member>> members;
  Member* current = nullptr;
  // The scheduler's side, for the sanitizers.
  void* tsan_sched = nullptr;
  void* asan_fake_stack = nullptr;
  const void* sched_bottom = nullptr;
  size_t sched_size = 0;
};

// Sanitizer bookkeeping of a switch (no-ops in ordinary builds): TSan and
// ASan must be told when the stack under them changes.
void before_resume_kernel(Group& g, Member& m) {
#ifdef TASKRING_FIBER_TSAN
  __tsan_switch_to_fiber(m.tsan_fiber, 0);
#endif
#ifdef TASKRING_FIBER_ASAN
  __sanitizer_start_switch_fiber(&g.asan_fake_stack, static_cast<char*>(m.stack.sp) - m.stack.size, m.stack.size);
#endif
  (void)g;
  (void)m;
}
void back_in_scheduler(Group& g) {
#ifdef TASKRING_FIBER_ASAN
  __sanitizer_finish_switch_fiber(g.asan_fake_stack, nullptr, nullptr);
#endif
  (void)g;
}
void in_kernel(Group& g, Member& m) {
#ifdef TASKRING_FIBER_ASAN
  __sanitizer_finish_switch_fiber(m.asan_fake_stack, &g.sched_bottom, &g.sched_size);
#endif
  (void)g;
  (void)m;
}
void before_leave_kernel(Group& g, Member& m, bool finished) {
#ifdef TASKRING_FIBER_TSAN
  __tsan_switch_to_fiber(g.tsan_sched, 0);
#endif
#ifdef TASKRING_FIBER_ASAN
  __sanitizer_start_switch_fiber(finished ? nullptr : &m.asan_fake_stack, g.sched_bottom, g.sched_size);
#endif
  (void)g;
  (void)m;
  (void)finished;
}

// WaitContext::yield: back to the scheduler loop in launch_co_resident.
void yield_to_scheduler(void* gp) {
  Group& g = *static_cast<Group*>(gp);
  Member* m = g.current;
  before_leave_kernel(g, *m, false);
  m->sink = std::move(m->sink).resume();
  in_kernel(g, *m);
}

// Member storage is reused across groups on a thread (LaunchScratch is a few
// KiB); the error message of a failure stays valid until the next launch.
Group& thread_group() {
  thread_local Group g;
  return g;
}

}  // namespace

bool launch_co_resident(const LaunchTask& t, int first_block, int block_count, bool whole_task,
                        const LaunchPlace& place, Device& device, const taskring_kernel_fn* kernels,
                        std::atomic<uint64_t>& calls, LaunchFailure* failure) {
  const Topology& topo = place.topology;
  Group& g = thread_group();
  size_t n = 0;
  int active_slots = 0;
  for (int slot = 0; slot < 3; ++slot) active_slots += t.kernels[slot] >= 0;
  const bool lone_aiv = active_slots == 1 && t.kernels[0] < 0;
  for (int b = first_block; b < first_block + block_count; ++b) {
    const int cluster = whole_task ? b % std::max(topo.clusters, 1) : home_cluster(place, b);
    for (int slot = 0; slot < 3; ++slot) {
      if (t.kernels[slot] < 0) continue;
      if (g.members.size() <= n) g.members.push_back(std::make_unique<Member>());
      Member& m = *g.members[n++];
      prepare_scratch(m.scratch, t, topo, device, place.window);
      prepare_call(m.scratch, t, b, slot, cluster, whole_task && lone_aiv ? b % std::max(topo.aiv_count(), 1) : -1,
                   topo);
      m.fn = kernels[t.kernels[slot]];
      m.block = b;
      m.slot = slot;
      m.cluster = cluster;
      m.done = false;
      m.deadline_ns = 0;
      m.asan_fake_stack = nullptr;
      Member* mp = &m;
      Group* gp = &g;
      m.fiber = ctx::fiber(std::allocator_arg, CachedStack(), [mp, gp](ctx::fiber&& sink) {
        in_kernel(*gp, *mp);
        mp->sink = std::move(sink);
        mp->fn(mp->scratch.args);
        mp->done = true;
        before_leave_kernel(*gp, *mp, true);
        return std::move(mp->sink);
      });
      m.stack = t_last_stack;
#ifdef TASKRING_FIBER_TSAN
      m.tsan_fiber = __tsan_create_fiber(0);
#endif
    }
  }

  WaitContext& w = wait_context();
  const WaitContext saved = w;
  w.timeout_ns = place.wait_timeout_ms * 1'000'000ull;
  w.yield = &yield_to_scheduler;
  w.group = &g;
#ifdef TASKRING_FIBER_TSAN
  g.tsan_sched = __tsan_get_current_fiber();
#endif
  Member* first_failed = nullptr;
  size_t live = n;
  uint32_t rounds = 0;
  while (live > 0) {
    for (size_t i = 0; i < n; ++i) {
      Member& m = *g.members[i];
      if (m.done) continue;
      g.current = &m;
      w.current_deadline = &m.deadline_ns;
      if (place.profile && m.started == 0) m.started = DeviceProfile::now();
      before_resume_kernel(g, m);
      m.fiber = std::move(m.fiber).resume();
      back_in_scheduler(g);
      if (!m.done) continue;
#ifdef TASKRING_FIBER_TSAN
      __tsan_destroy_fiber(m.tsan_fiber);
      m.tsan_fiber = nullptr;
#endif
      --live;
      calls.fetch_add(1, std::memory_order_relaxed);
      if (place.profile) m.ended = DeviceProfile::now();
      if (m.scratch.local.error_code != 0 && first_failed == nullptr) first_failed = &m;
    }
    // Every live kernel is waiting: give the hardware thread away now and
    // then (a sibling's signal may come from another thread).
    if (live > 0 && (++rounds & 63) == 0) sched_yield();
  }
  g.current = nullptr;
  w = saved;
  if (place.profile) {
    for (size_t i = 0; i < n; ++i) {
      Member& m = *g.members[i];
      place.profile->record(place.executor,
                            {t.id, m.started, m.ended, t.kernels[m.slot], m.block, static_cast<int16_t>(m.cluster),
                             static_cast<int16_t>(m.scratch.local.core_id), m.slot == 0});
      m.started = 0;
    }
  }
  if (first_failed == nullptr) return true;
  failure->func_id = first_failed->scratch.local.func_id;
  failure->code = first_failed->scratch.local.error_code;
  failure->core_id = first_failed->scratch.local.core_id;
  failure->block = first_failed->block;
  failure->message = first_failed->scratch.local.error_message;
  return false;
}

}  // namespace taskring::exec
