// Where a node's chip children run (NodeConfig::ChipPin::kAuto).
#pragma once

namespace taskring::node {

// Whether kAuto runs every chip inline (NodeConfig::chip_inline): when the
// chips are at least as many as the usable CPUs. Each chip would then get one
// executor thread, next to its orchestration thread and the parent's: one
// thread per chip does the same work without the wakes between them.
// Measured on 2 CPUs with 2 chips (docs/bench-log/2026-12-02_to_2026-12-06.md#stop-19), inline
// over threaded: the DSV4 decode step 0.80-0.90x, the 2-rank MoE step
// 0.76-0.81x, multi_chip 0.95-1.01x, a 4 KiB allreduce from Python 0.45x.
bool run_chips_inline_by_default(int chips, int cpus);

// Whether kAuto pins chip child i to CPU (i mod cpus) of the node's
// affinity mask, for `chips` chip children on `cpus` usable CPUs, each
// running its kernels inline or on `sim_threads` executor threads:
// - inline chips that outnumber the CPUs: every run has the same placement
//   (which chips share a CPU) instead of whichever one wake-ups make;
// - two or more chips that fit the CPUs one each and execute on one thread
//   (inline or sim_threads == 1): like MPI's bind-to-core, no two ranks of
//   a collective land on one CPU, where a spinning rank waits for a peer
//   that cannot run.
// A chip with several executor threads is never pinned to one CPU.
bool pin_chips_by_default(int chips, int cpus, bool inline_chips, int sim_threads);

}  // namespace taskring::node
