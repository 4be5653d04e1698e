// Orchestrator: what a node orchestration function receives.
//
// Every submit builds one DAG node and returns at once; dependencies on
// earlier tasks of the same run are inferred from the tensor tags and byte
// ranges (the L2 rules: RAW, WAW and WAR; INPUT reads, OUTPUT_EXISTING
// writes, INOUT both, NO_DEP is passed through untracked). Tensors must be
// HOST views inside the node's shared heap (NodeWorker::alloc_shared or
// alloc() below), or DEVICE addresses of the target chip (malloc() below).
// A chip task writes its written views back whole, so a view a chip task
// writes must be contiguous. OUTPUT (TensorCreateInfo) is not accepted: use
// alloc(). Errors name the task, the argument and the rule; once a task of
// the run failed, every later submit returns that first error at once.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>

#include <memory>
#include <string>

#include "taskring/base/expected.hpp"
#include "taskring/node/comm_domain.hpp"
#include "taskring/tensor/chip_tensor.hpp"
#include "taskring/tensor/task_args.hpp"

namespace taskring::node {

class Engine;
class DomainRegistry;
struct RunState;

class Orchestrator {
 public:
  // One task on chip `chip` running chip callable `callable`
  // (NodeWorker::register_chip).
  Status submit_next_level(int callable, const ChipTaskArgs& args, int chip);
  // One DAG node of several chip tasks that start together (the way
  // collectives are co-scheduled): member i runs args[i] on chips[i]; chips
  // are distinct. A failed member fails the node; one error is reported.
  Status submit_next_level_group(int callable, std::span<const ChipTaskArgs* const> args, std::span<const int> chips);
  // One task on any idle SUB worker, running SUB callable `callable`
  // (NodeWorker::register_sub).
  Status submit_sub(int callable, const ChipTaskArgs& args);
  // args.size() SUB tasks started together on distinct SUB workers.
  Status submit_sub_group(int callable, std::span<const ChipTaskArgs* const> args);

  // Nested scopes (at most 64 deep). Heap-ring memory from alloc() is
  // returned once its scope has ended and every task submitted before that
  // end has finished; the run's end closes every scope.
  Status scope_begin();
  Status scope_end();

  // A contiguous HOST tensor of `shapes` from the heap ring (1024-aligned,
  // zero-filled is NOT guaranteed). A full ring blocks until earlier scopes
  // retire, then fails with DEADLINE_EXCEEDED naming
  // NodeConfig::heap_ring_bytes.
  Expected<ChipTensor> alloc(std::span<const uint32_t> shapes, DataType dtype);
  Expected<ChipTensor> alloc(std::initializer_list<uint32_t> shapes, DataType dtype) {
    return alloc(std::span<const uint32_t>(shapes.begin(), shapes.size()), dtype);
  }

  // Chip memory, synchronous control calls to chip `chip`. `host` must lie
  // in the shared heap (the child reads/writes it directly). A chip serves
  // a control call between two of its tasks, so free, copy_to and copy_from
  // first wait until every task this run submitted before them has finished
  // (like a copy on CUDA's default stream): a copy_from sees what those
  // tasks wrote, and no task still reads memory a copy_to overwrites or a
  // free returns. The wait ends with the run's first error, or
  // DEADLINE_EXCEEDED after 10 minutes. Stage inputs before the first
  // submit to keep the run's tasks overlapping. malloc does not wait.
  Expected<uint64_t> malloc(int chip, uint64_t bytes);
  Status free(int chip, uint64_t device_addr);
  Status copy_to(int chip, uint64_t device_addr, const void* host, uint64_t bytes);
  Status copy_from(int chip, void* host, uint64_t device_addr, uint64_t bytes);

  // A comm domain over `chips` (comm_domain.hpp): one window of
  // `window_size` bytes per member, `buffers` carved from each window.
  // Synchronous: returns once every member mapped and zeroed its window.
  // Lives until this run's completion fence. A member attaches only between
  // two of its tasks, so when the members are involved (every allocation but
  // the reuse of a cached domain), the tasks this run submitted earlier
  // finish first: a collective still in flight could otherwise wait for a
  // member already parked at the allocation barrier. That wait ends with
  // the run's first error, or DEADLINE_EXCEEDED after 10 minutes.
  Expected<std::shared_ptr<CommDomain>> allocate_domain(const std::string& name, std::span<const int> chips,
                                                        uint64_t window_size,
                                                        std::span<const DomainBufferSpec> buffers = {});

  // A comm domain spanning nodes (L4; docs/l4.md): `members` on several
  // nodes (MPI ranks), member i = domain rank i. Every member node runs
  // this with the same arguments; the n-th domain of a name on each node is
  // the same domain. Returns this node's view: chips() are its own members,
  // size() counts every rank. Members on other nodes are reached with put /
  // put_tile / notify / barrier / the collective flags (sent through MPI by
  // the node's progress thread); reading an off-node window (get) is a
  // kernel error. Validated like allocate_domain, plus: nodes in
  // [0, nodes), chips of this node's range, no (node, chip) twice, at least
  // one member here. UNIMPLEMENTED outside an L4 NetWorker. Where every
  // member node shares the domain's object (one host), a passed run's
  // domain is kept (NodeConfig::domain_cache) and the next call with the
  // same name, members and window size reuses it, every window zeroed, once
  // every member node made that call; DEADLINE_EXCEEDED naming the ranks
  // whose node did not within NodeConfig::comm_timeout_ms.
  Expected<std::shared_ptr<CommDomain>> allocate_global_domain(const std::string& name,
                                                               std::span<const GlobalMember> members,
                                                               uint64_t window_size,
                                                               std::span<const DomainBufferSpec> buffers = {});

  int chips() const;
  int sub_workers() const;

 private:
  friend class Engine;
  Orchestrator(Engine* engine, RunState* run, DomainRegistry* domains)
      : engine_(engine), run_(run), domains_(domains) {}
  Engine* engine_;
  RunState* run_;
  DomainRegistry* domains_;  // nullptr: no comm transport (UNIMPLEMENTED)
};

}  // namespace taskring::node
