// Callables and helpers shared by the node integration tests.
//
// A Gate lives in the shared heap: a task that opens it raises `started` and
// rings the bell, then waits (spin-then-park, 10 s deadline) for `release`.
// Tests wait on `started` through the same bell, with deadlines, never
// sleeping.
#pragma once

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "pto_orchestration_api.h"
#include "shm_bell.hpp"
#include "taskring/kernels/builtin_ids.hpp"
#include "taskring/node/node_worker.hpp"

namespace taskring::node::testing {

struct Gate {
  ShmBell bell;
  std::atomic<uint32_t> started{0};
  std::atomic<uint32_t> release{0};
  std::atomic<uint32_t> ran{0};  // bodies that ran to the end
};

inline Gate* gate_at(uint64_t addr) { return reinterpret_cast<Gate*>(static_cast<uintptr_t>(addr)); }

// Inside a task: announce, then wait for the release (10 s at most).
inline Status gate_pass(Gate* g) {
  g->started.fetch_add(1, std::memory_order_acq_rel);
  bell_ring(g->bell);
  Status s = bell_wait(
      g->bell, [&] { return g->release.load(std::memory_order_acquire) != 0; }, [] { return Status::Ok(); },
      Deadline::after_ms(10000), "gate release", 1'000'000);
  g->ran.fetch_add(1, std::memory_order_acq_rel);
  return s;
}

inline Status wait_started(Gate* g, uint32_t n, uint64_t ms = 10000) {
  return bell_wait(
      g->bell, [&] { return g->started.load(std::memory_order_acquire) >= n; }, [] { return Status::Ok(); },
      Deadline::after_ms(ms), "gate started", 1'000'000);
}

inline void open_gate(Gate* g) {
  g->release.store(1, std::memory_order_release);
  bell_ring(g->bell);
}

// Chip entry: out = a + s (scalar 0, f32 bits), or, when scalar 1 is
// non-zero, a task on an unregistered kernel id (the run fails).
inline void add_scalar_entry(const ChipTaskArgs& args) {
  CoreTaskArgs t;
  t.add_input(*args.tensor(0)).add_output(*args.tensor(1));
  uint64_t bits = args.scalar(0);
  t.add_scalars(&bits, 1);
  const bool fail = args.scalar_count() > 1 && args.scalar(1) != 0;
  rt_submit_aiv_task(fail ? 5 : kernels::builtin_id::kAddScalar, t);
}

// Chip entry: passes the Gate at scalar 0 (blocks on the chip's
// orchestration thread).
inline void gate_entry(const ChipTaskArgs& args) { (void)gate_pass(gate_at(args.scalar(0))); }

inline ChipCallable add_scalar_callable() {
  ChipCallable c;
  c.name = "add_scalar";
  c.entry = add_scalar_entry;
  return c;
}
inline ChipCallable gate_callable() {
  ChipCallable c;
  c.name = "gate";
  c.entry = gate_entry;
  return c;
}

// A small node for tests: `chips` chips on one sim thread each, `subs` SUB
// workers, 1 MiB of heap ring and of shared heap, a 2 s close.
inline NodeConfig small_node(int chips, int subs, NodeConfig cfg = {}) {
  cfg.chips = chips;
  cfg.sub_workers = subs;
  cfg.chip_threads = 1;
  cfg.heap_ring_bytes = 1 << 20;
  cfg.shared_bytes = 1 << 20;
  cfg.close_timeout_ms = 2000;
  return cfg;
}

inline uint64_t f32_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// Waits for `pid` (not necessarily our child) to exit; true if it did.
inline bool wait_pid_gone(pid_t pid, int timeout_ms) {
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH;
  pollfd p{fd, POLLIN, 0};
  int r = poll(&p, 1, timeout_ms);
  close(fd);
  return r == 1;
}

}  // namespace taskring::node::testing
