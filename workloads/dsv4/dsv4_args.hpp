// The argument layout of the dsv4 chip callable: the entry (ChipTaskArgs)
// and the Graph boundary of one decoder layer (GraphTaskArgs).
//
// Entry scalars: the run scalars (which layers, head or not, Graph or not),
// then the body scalars, which are also the boundary's scalars, verbatim.
// The body scalars are the same for every layer and every run of a chip:
// replay follows a node scalar by value (docs/graph.md, scalar provenance),
// so nothing that changes between runs may sit on the boundary.
#pragma once

#include <cstdint>

namespace taskring::workloads::dsv4 {

// Entry tensors. Per-layer weights are stacked over layers; the entry loop
// passes each layer its views. A tensor in device memory (weights resident
// on the chip) is passed NO_DEP: the chip reads it in place.
enum EntryTensor : int {
  kX,          // [B, H] INOUT: the hidden state
  kAttnNorm,   // [L, H]
  kQNorm,      // [L, Rq]
  kKvNorm,     // [L, Rkv]
  kFfnNorm,    // [L, H]
  kWdq,        // [L·H, Rq]
  kWuq,        // [L·Rq, heads·D]
  kWdkv,       // [L·H, Rkv]
  kWukv,       // [L·Rkv, 2·kv_heads·D]
  kWo,         // [L·heads·D, H]
  kWg,         // [L·H, F]
  kWu,         // [L·H, F]
  kWd,         // [L·F, H]
  kRouter,     // [Lm·H, E]
  kEg,         // [Lm·El·H, Fe]: this chip's El = E/ep experts of every MoE layer
  kEu,         // [Lm·El·H, Fe]
  kEd,         // [Lm·El·Fe, H]
  kKc,         // [L·kv_heads·pool·bs, D] INOUT
  kVc,         // same
  kCos,        // [context+1, D/2]
  kSin,        // [context+1, D/2]
  kPos,        // [B] INT32
  kTable,      // [B, max_blocks] INT32
  kFinalNorm,  // [H]
  kLmHead,     // [H, V/ep]: this chip's columns
  kLogits,     // [B, V/ep] OUTPUT_EXISTING
  kRouted,     // [B, H] INOUT: routed partial (MoE mode kPartial), else untouched
  kEntryTensors
};

// Run scalars, at the front of the entry scalars.
enum RunScalar : int {
  kLayers,       // L
  kDenseLayers,  // Ld
  kLayerBegin,   // first layer this run computes
  kLayerEnd,     // one past the last
  kHead,         // 1: final RMSNorm + LM head after the layers (kEp: after an allgather of x)
  kMoeMode,      // MoeMode
  kGraph,        // 1: one rt_submit_graph per layer; 0: the same bodies as ordinary tasks
  kRunScalars
};

// Body scalars (the boundary's), after the run scalars in the entry.
enum BodyScalar : int {
  kB,
  kH,
  kHeads,
  kKvHeads,
  kD,
  kRq,
  kRkv,
  kF,
  kE,
  kLocalExperts,
  kExpertBase,
  kTopk,
  kFe,
  kEps,  // float bits
  kContext,
  kBlockSize,
  kPool,
  kBalanced,
  // MoeMode::kEp only (0 otherwise): the comm domain of the run.
  kCommCtx,  // this chip's CommContext (device address), for the comm kernels
  kCountsOff,
  kRecvXOff,
  kRecvWOff,
  kRecvMetaOff,
  kRetOff,     // MoE window buffers (byte offsets)
  kGatherOff,  // allgather scratch (the LM head's hidden-state gather)
  kTokenBase,  // global index of this chip's first token (balanced routing)
  kCapacity,   // rows a chip can receive in one dispatch (chips·B·topk: never overflows)
  kFirstPhys,  // B values: the new token's physical block per sequence
};

// Boundary tensors of a layer body; a MoE layer appends kRouter.. kEd.
enum BodyTensor : int {
  bX,
  bAttnNorm,
  bQNorm,
  bKvNorm,
  bFfnNorm,
  bWdq,
  bWuq,
  bWdkv,
  bWukv,
  bWo,
  bWg,
  bWu,
  bWd,
  bKc,
  bVc,
  bCos,
  bSin,
  bPos,
  bTable,
  bRouted,
  bDenseTensors,
  bRouter = bDenseTensors,
  bEg,
  bEu,
  bEd,
  bMoeTensors
};

// Where the routed experts' weighted sum goes.
enum MoeMode : int64_t {
  kLocal = 0,    // into x (every routed expert is on this chip)
  kPartial = 1,  // into kRouted; x gets attention + shared expert only (a host combine adds the chips' partials)
  kEp = 2,       // expert parallel over the node's comm domain: moe_dispatch → moe_expert_ffn (this chip's
                 // experts) → moe_combine, added into x; the LM head all-gathers x first
};

}  // namespace taskring::workloads::dsv4
