// The body of a forked child: a chip (one ChipWorker) or a SUB worker.
//
// child_main never returns: it leaves through _exit so that the child never
// unwinds into the parent's stack frames (gtest, the CLI, ...). Startup:
// own process group (so rollback can killpg the child and anything it
// spawned), PR_SET_PDEATHSIG(SIGKILL) and a re-check of the parent pid (the
// parent may have died before the prctl), the init hook, then for a chip the
// ChipWorker with every registered callable, then INIT_READY (or
// INIT_FAILED with the reason). The serve loop waits spin-then-park on its
// mailbox bell, re-checking the parent between park slices.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <string>
#include <vector>

#include "mailbox.hpp"
#include "taskring/chip/chip_worker.hpp"
#include "taskring/node/node_config.hpp"
#include "window_exchange.hpp"

namespace taskring::node {

struct ChildSpec {
  ChildKind kind = ChildKind::kChip;
  int index = 0;
  int rank_base = 0;  // chip.run spans carry rank = rank_base + index
  Mailbox* mailbox = nullptr;
  ShmBell* parent_bell = nullptr;
  // When set, the serve loop also wakes on this bell (the parent starts a
  // group's members with one ring of it); nullptr: its mailbox bell only.
  ShmBell* group_bell = nullptr;
  // The node's group countdowns, indexed by Mailbox::countdown.
  std::atomic<uint32_t>* group_countdowns = nullptr;
  // The node's GroupGates (kGroupGates), indexed by TaskSlot::wait_gate
  // and done_gate; set with group_bell (their waiters park on it).
  GroupGate* group_gates = nullptr;
  pid_t parent_pid = 0;
  const std::vector<ChipCallable>* chip_callables = nullptr;
  const std::vector<SubFunction>* sub_functions = nullptr;
  std::string runtime = "tmr";
  int sim_threads = 1;
  bool run_inline = false;  // TASKRING_RUN_INLINE of the chip
  int pin_slot = -1;        // >= 0: pin to CPU slot (pin_to_cpu_slot) at init
  EnvLookup env;
  ChildInitHook hook;
  // The child's end of its descriptor socket (comm domains); -1 for none.
  int comm_socket = -1;
  // Every other process's socket end, closed in the child after the fork.
  std::vector<int> foreign_sockets;
  WindowExchange* exchange = nullptr;  // chips: how domains are mapped
};

[[noreturn]] void child_main(const ChildSpec& spec);

// Rebases a HOST view onto exactly the bytes it spans (start_offset 0,
// buffer = [first element, last element]), so ChipWorker stages and writes
// back only those bytes and never a neighbour's. DEVICE tensors are
// returned unchanged.
ChipTensor rebase_host_view(const ChipTensor& t);

}  // namespace taskring::node
