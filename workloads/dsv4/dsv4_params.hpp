// The dsv4 parameters (shared by the chip and the node workload) and the
// entry arguments of one chip run.
#pragma once

#include <array>
#include <cstdint>

#include "dsv4_args.hpp"
#include "dsv4_problem.hpp"
#include "taskring/base/expected.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/workloads/params.hpp"

namespace taskring::workloads::dsv4 {

// Declares the shape parameters, graph, full-shape and seed.
void declare_params(ParamSet& params);

// The shape the parameters describe for `ep` chips; `full-shape 1` replaces
// the widths by the preset (43 layers, 3 dense, widths scaled down) and
// keeps an explicitly changed `layers`. INVALID_ARGUMENT from
// Shape::validate().
Expected<Shape> shape_from(const ParamSet& params, int64_t ep);

// The tensors of one chip's entry, indexed by EntryTensor.
using EntryTensors = std::array<ChipTensor, kEntryTensors>;

// Which part of the step a run computes.
struct RunPart {
  int64_t layer_begin = 0, layer_end = 0;  // [begin, end)
  bool head = true;                        // final norm + LM head after them
  MoeMode mode = kLocal;
  bool graph = true;
  int64_t chip = 0;                       // EP rank: experts [chip·E/ep, ...)
  int64_t seq_begin = 0, seq_count = -1;  // this chip's sequences (-1: all of them)
  // MoeMode::kEp: the run's comm domain, as this chip sees it.
  struct Comm {
    uint64_t ctx = 0;                                                                 // DomainMember::device_ctx
    uint64_t counts = 0, recv_x = 0, recv_w = 0, recv_meta = 0, ret = 0, gather = 0;  // buffer offsets
    uint64_t capacity = 0;                                                            // rows a chip can receive
  } comm;
};

// Fills `args` (empty on entry): the tensors with their tags (device
// tensors NO_DEP; host x, caches and the routed partial INOUT, logits
// OUTPUT_EXISTING, the rest INPUT), then the run scalars and the body
// scalars.
void add_entry_args(ChipTaskArgs& args, const EntryTensors& t, const Problem& p, const RunPart& part);

// Kernel tasks one run of `part` submits (Graph nodes included).
uint64_t tasks_of(const Shape& s, const RunPart& part);

}  // namespace taskring::workloads::dsv4
