// Graph Execution, orchestration side: record a repeated sub-graph once (a
// Graph *Definition*) and replay it as one outer GRAPH task.
//
//   void layer(const GraphTaskArgs& b) { ... rt_submit_task(...) ... }   // the body
//   GraphTaskArgs b; b.add_input(w).add_inout(x).add_scalar(eps);
//   rt_submit_graph(layer, b);                                  // key: the function
//   rt_submit_graph(GRAPH_KEY("layer"), layer_cfg, b, true, 4); // key: name + config values
//
// Contract (every runtime):
//   - The body is a free function (or captureless lambda converted with `+`).
//     It sees its boundary only through its GraphTaskArgs argument: tensor i
//     of the boundary is the i-th add_* at the call site. Boundary tags:
//     INPUT, INOUT, OUTPUT_EXISTING, NO_DEP; an OUTPUT (TensorCreateInfo) or
//     explicit dependencies on the boundary make the call run the body as
//     ordinary tasks (with a warning).
//   - Config values (integral, bool, float, double) are passed to the body
//     after the boundary and hashed into the key: distinct values select
//     distinct Definitions.
//   - Semantics are those of calling the body inline: a runtime without Graph
//     support (tmr) does exactly that.
//
// On hbg the first call of a key records the body into a Definition; a later
// call whose boundary matches it (counts, tags, buffer sizes, shapes,
// strides, dtypes, manual_dep, contiguity, the alias partition of tensors and
// the equality partition of scalars) replays it; a mismatch logs a warning
// and runs the body as ordinary tasks. Limits (clear run errors): 1024 nodes
// per Definition, 16 Definitions per run, 128 tensors / 64 scalars per
// boundary. Unrecordable constructs fail the run before upload with a message
// naming the construct and the body: a nested rt_submit_graph, a tensor that
// is neither a boundary tensor, a view of one's buffer nor produced inside
// the body, a node writing a boundary tensor tagged INPUT/NO_DEP, an explicit
// dependency on a task outside the body, get/set_tensor_data, an initial
// value on an OUTPUT, a mutated boundary scalar, unbalanced or AUTO-in-MANUAL
// scopes. Node scalars that equal boundary scalar i at record time follow
// boundary scalar i on replay; all other node scalars are baked (docs/graph.md).
#pragma once

#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>

#include "taskring/chip/orchestration_binding.hpp"
#include "taskring/chip/orchestration_types.hpp"
#include "taskring/tensor/task_args.hpp"

namespace taskring {

inline constexpr int GRAPH_MAX_NODES = 1024;
inline constexpr int GRAPH_MAX_DEFINITIONS = 16;

using GraphFunction = void (*)(const GraphTaskArgs&);

// An explicit Graph identity: FNV-1a 64 of the name. Two different bodies
// under one key are a user error (the first recorded topology wins).
struct GraphKey {
  uint64_t hash = 0;
  const char* name = nullptr;
};

namespace graph_detail {
constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001b3ull;
constexpr uint64_t fnv_str(const char* s, uint64_t h = kFnvOffset) {
  for (; *s != '\0'; ++s) {
    h ^= static_cast<unsigned char>(*s);
    h *= kFnvPrime;
  }
  return h;
}
inline uint64_t fnv_bytes(const void* p, size_t n, uint64_t h) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) {
    h ^= b[i];
    h *= kFnvPrime;
  }
  return h;
}
template <typename T>
inline uint64_t mix_config(uint64_t h, const T& v) {
  static_assert(std::is_integral_v<T> || std::is_floating_point_v<T>,
                "Graph config values must be integral, bool, float or double");
  const uint8_t tag[2] = {static_cast<uint8_t>(std::is_floating_point_v<T> ? 2
                                               : std::is_same_v<T, bool>   ? 1
                                                                           : 0),
                          static_cast<uint8_t>(sizeof(T))};
  h = fnv_bytes(tag, 2, h);
  return fnv_bytes(&v, sizeof(T), h);
}
}  // namespace graph_detail

}  // namespace taskring

#define GRAPH_KEY(name) (::taskring::GraphKey{::taskring::graph_detail::fnv_str(name), name})

namespace taskring {

struct GraphSubmitResult {
  bool replayed = false;  // ran as one outer GRAPH task (a Definition hit or a fresh recording)
  bool recorded = false;  // this call recorded the Definition
  bool fallback = false;  // ran the body as ordinary tasks (no Graph support, or a boundary mismatch)
  PTO2TaskId task_id;     // the outer GRAPH task when replayed
};

namespace graph_detail {
template <typename... Cfg>
struct Closure {
  void (*fn)(const GraphTaskArgs&, Cfg...);
  std::tuple<Cfg...> cfg;
  static void invoke(const GraphTaskArgs& args, const void* self) {
    const auto* c = static_cast<const Closure*>(self);
    std::apply([&](const Cfg&... v) { c->fn(args, v...); }, c->cfg);
  }
};

template <typename... Cfg>
inline GraphSubmitResult submit(uint64_t key, const char* name, void (*fn)(const GraphTaskArgs&, Cfg...),
                                const GraphTaskArgs& args, Cfg... cfg) {
  GraphSubmitResult r;
  if (!orch_detail::live() || fn == nullptr) return r;
  uint64_t h = key;
  ((h = mix_config(h, cfg)), ...);
  Closure<Cfg...> closure{fn, std::tuple<Cfg...>(cfg...)};
  PTO2Runtime* rt = orch_detail::rt();
  if (rt->ops->submit_graph == nullptr) {
    Closure<Cfg...>::invoke(args, &closure);
    r.fallback = true;
    return r;
  }
  return rt->ops->submit_graph(rt, h, name, &Closure<Cfg...>::invoke, &closure, args);
}
}  // namespace graph_detail

// Key: the body's address (and the config values).
template <typename... Cfg>
inline GraphSubmitResult rt_submit_graph(void (*fn)(const GraphTaskArgs&, Cfg...), const GraphTaskArgs& args,
                                         std::type_identity_t<Cfg>... cfg) {
  uint64_t bits = reinterpret_cast<uintptr_t>(fn);
  return graph_detail::submit<Cfg...>(graph_detail::fnv_bytes(&bits, sizeof(bits), graph_detail::kFnvOffset), nullptr,
                                      fn, args, cfg...);
}

// Key: GRAPH_KEY("name") (and the config values); the body's address is not
// part of it.
template <typename... Cfg>
inline GraphSubmitResult rt_submit_graph(GraphKey key, void (*fn)(const GraphTaskArgs&, Cfg...),
                                         const GraphTaskArgs& args, std::type_identity_t<Cfg>... cfg) {
  return graph_detail::submit<Cfg...>(key.hash, key.name, fn, args, cfg...);
}

}  // namespace taskring
