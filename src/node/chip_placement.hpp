// Where a node's chip children run (NodeConfig::ChipPin::kAuto).
#pragma once

namespace taskring::node {

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
