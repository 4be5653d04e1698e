// Counters of the host_build_graph runtime and Graph Execution for one run,
// reported in RunReport::graph (all zero on tmr).
#pragma once

#include <cstdint>

namespace taskring {

struct GraphRunStats {
  // Tasks and nodes.
  uint64_t host_tasks = 0;        // entries in the task image (a GRAPH task counts once)
  uint64_t graph_tasks = 0;       // outer GRAPH tasks (replays, including first recordings)
  uint64_t graph_nodes_run = 0;   // Definition nodes the scheduler executed
  uint64_t definitions_used = 0;  // distinct Definitions this run (limit 16)
  uint64_t definitions_recorded = 0;
  uint64_t nodes_recorded = 0;
  uint64_t fallbacks = 0;  // calls that ran the body as ordinary tasks (boundary mismatch)
  // Host phases (ns) and copies.
  uint64_t host_orch_ns = 0;  // entry start .. entry return
  uint64_t record_ns = 0;     // part of host_orch spent recording bodies and building Definitions
  uint64_t graph_upload_ns = 0, graph_upload_calls = 0, graph_upload_bytes = 0;  // new Definitions
  uint64_t arena_h2d_ns = 0, arena_h2d_calls = 0, arena_h2d_bytes = 0;           // submission images
  uint64_t arena_submissions = 0;           // submissions written into the pinned arena
  uint64_t arena_fallback_submissions = 0;  // arena full: uploaded one by one (one copy each)
  uint64_t image_h2d_ns = 0, image_h2d_calls = 0, image_h2d_bytes = 0;  // the task image
};

}  // namespace taskring
