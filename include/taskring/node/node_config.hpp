// NodeConfig and the callables of the L3 node (one host, N sim chips, M SUB
// workers). See node_worker.hpp for the life cycle.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "taskring/base/knobs.hpp"
#include "taskring/base/status.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/tensor/task_args.hpp"

namespace taskring::node {

// How a node reaches comm domains spanning nodes (src/node/window_exchange.hpp).
class GlobalDomainTransport;

// Which kind of child a hook runs in.
enum class ChildKind : uint8_t { kChip = 0, kSub = 1 };

// Runs in a freshly forked child before it reports INIT_READY; a non-OK
// status becomes INIT_FAILED with that message. For per-process setup (and
// for tests of the startup rollback). Runs in the child: it must not touch
// parent-only state, and it must not return into the parent's stack frames.
using ChildInitHook = std::function<Status(ChildKind kind, int index)>;

// A SUB callable: runs in a SUB child on host tensors in the shared heap.
// Tensors arrive as passed (HOST views into the shared heap, same address in
// every process); the function reads and writes them in place.
using SubFunction = std::function<Status(const ChipTaskArgs& args)>;

struct NodeConfig {
  int chips = 1;                // sim chip children, 0..64
  int sub_workers = 0;          // SUB children, 0..64
  std::string runtime = "tmr";  // L2 runtime of every chip: tmr | hbg
  // Executor threads per chip (TASKRING_SIM_THREADS in the child). 0: the
  // hardware threads divided by the chips, at least 1, so N chips never
  // oversubscribe the machine. A TASKRING_SIM_THREADS in `env` wins over 0.
  int chip_threads = 0;
  // Whether a chip child runs each chip run on its one serving thread
  // (TASKRING_RUN_INLINE in the child: no orchestrator or executor threads,
  // so no wakes between them; docs/knobs.md says what an inline run cannot
  // do). kAuto: inline when the chips are at least as many as the hardware
  // threads (each chip would get one executor anyway, and every extra
  // runnable thread costs the others a wake on a shared core). A
  // TASKRING_RUN_INLINE in `env` wins over kAuto.
  enum class ChipInline { kAuto, kOn, kOff };
  ChipInline chip_inline = ChipInline::kAuto;
  // Whether chip child i is pinned to CPU (i mod N) of the N in the node's
  // affinity mask. kAuto pins (a) inline chips that outnumber the CPUs, so
  // every run has the same placement (which chips share a CPU) instead of
  // whichever one the kernel's wake-ups make (8 chips over 2 CPUs: the
  // run-to-run spread of the MoE bench fell from a median 13 % to 5 %), and
  // (b) two or more chips that fit the CPUs one each and execute on one
  // thread (inline or one sim thread), as MPI binds ranks to cores (2 ranks,
  // 4 MiB allreduce: no more runs at 3 GB/s with both ranks on one CPU);
  // docs/benchmarks.md. A chip with several executor threads is not pinned
  // by kAuto. Under kAuto, TASKRING_CHIP_PIN in `env` (boolean) decides
  // instead when set; a bad value fails init() naming it. Spin-or-park
  // decisions in a pinned child still count the node's CPUs.
  enum class ChipPin { kAuto, kOn, kOff };
  ChipPin chip_pin = ChipPin::kAuto;
  // Bytes of the heap ring Orchestrator::alloc draws from.
  uint64_t heap_ring_bytes = 64ull << 20;
  // Bytes for NodeWorker::alloc_shared (inputs/outputs that live across runs).
  uint64_t shared_bytes = 64ull << 20;
  // One deadline for the whole startup (every child forked and READY).
  uint64_t startup_timeout_ms = 30000;
  // How long a full heap ring blocks Orchestrator::alloc before failing.
  uint64_t heap_wait_ms = 10000;
  // Deadline of one control call (malloc/copy on a chip).
  uint64_t control_timeout_ms = 30000;
  // Deadline of a comm domain's allocation barrier and of every kernel wait
  // in a domain (comm_domain.hpp); below the chip's run timeout, so a rank
  // that never arrives turns into a kernel error naming it.
  uint64_t comm_timeout_ms = 30000;
  // One-node comm domains kept mapped after their run's fence, at most this
  // many, so that a later allocate_domain of the same chips (same order)
  // and the same window size reuses one (the node clears it, with no request
  // to the members) instead of creating, mapping and prefaulting a new
  // object (docs/comm.md, "Domain cache"). A global domain (L4) whose
  // member nodes all share its object (one host) is kept too, for the next
  // allocate_global_domain of the same name, members and window size
  // (docs/l4.md, "Reuse across runs"). Only a run that passed leaves its
  // domains here; a failed run empties the cache. Each holds its object's
  // memory (ranks x window) until it is reused, evicted (oldest first) or
  // the worker closes. 0: every domain is unmapped at its fence. In [0, 64].
  int domain_cache = 4;
  // A child (chip or SUB) that stays stopped (SIGSTOP, SIGTSTP, a
  // debugger) this long is SIGKILLed, and its task and the run fail naming
  // the child and its pid, instead of waiting for it forever. Checked every
  // quarter of it (at least every 50 ms). 0: off. The knob
  // TASKRING_NODE_STALL_TIMEOUT_MS in `env` wins.
  uint64_t stall_timeout_ms = 30000;
  // Deadline of close()'s drain and reap steps.
  uint64_t close_timeout_ms = 10000;
  // Chip i's chip.run spans carry rank = rank_base + i (TASKRING_RANK). L4
  // sets it to node_rank * chips so ranks are unique across the nodes.
  int rank_base = 0;
  // Comm domains spanning nodes (Orchestrator::allocate_global_domain): set
  // by the L4 NetWorker (docs/l4.md); none on a node of its own.
  std::shared_ptr<GlobalDomainTransport> global_domains;
  ChildInitHook child_init;  // optional
  EnvLookup env = process_env();
};

}  // namespace taskring::node
