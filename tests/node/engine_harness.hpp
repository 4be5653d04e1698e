// An Engine over FakeEndpoints, for the engine's unit tests.
//
// Fake behaviour is chosen per task by its first scalar: kRun completes at
// once, kHold waits for FakeEndpoint::finish(), kFail fails. Host tensors
// live in `host` (inside the "shared heap" the engine validates against).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "dag/engine.hpp"
#include "dag/fake_endpoint.hpp"
#include "domain_registry.hpp"
#include "taskring/tensor/chip_tensor.hpp"
#include "window_exchange.hpp"

namespace taskring::node::testing {

enum Mode : uint64_t { kRun = 0, kHold = 1, kFail = 2 };

inline std::optional<Outcome> by_mode(const TaskPayload& p) {
  uint64_t mode = p.scalars.empty() ? kRun : p.scalars[0];
  if (mode == kHold) return std::nullopt;
  if (mode == kFail) return Outcome{OutcomeKind::kTaskFailure, internal_error("injected task failure")};
  return Outcome{};
}

struct Harness {
  static constexpr uint64_t kRing = 64 * 1024;
  static constexpr uint64_t kHost = 1 << 20;

  // `staged`: groups are staged behind a group bell and get countdown slots
  // (Engine::set_group_bell), as on a NodeWorker. `exchange`: comm domains
  // over it (the fake members "map" domain rank r at base r). `api`: the
  // caller the engine's messages name. `waiters_drive`:
  // EngineConfig::waiters_drive (on at L3 and L4; off tests the scheduler
  // thread alone). `depth`: tasks each fake chip queues (Endpoint::depth).
  // `driver_yield_ns`: EngineConfig::driver_yield_ns (set `bell.spin` to 0
  // for a driver to use it).
  explicit Harness(int chips, int subs = 0, uint64_t heap_wait_ms = 10000, bool staged = false,
                   WindowExchange* exchange = nullptr,
                   EngineApi api = {"NodeWorker", "NodeConfig::sub_workers", "NodeConfig::heap_ring_bytes"},
                   bool waiters_drive = true, int depth = 1,
                   uint64_t driver_yield_ns = EngineConfig{}.driver_yield_ns) {
    mem = static_cast<char*>(std::aligned_alloc(4096, kRing + kHost));
    std::vector<std::unique_ptr<Endpoint>> c, s;
    for (int i = 0; i < chips; ++i) {
      auto f = std::make_unique<FakeEndpoint>("chip " + std::to_string(i), &bell, by_mode, depth);
      chip.push_back(f.get());
      c.push_back(std::move(f));
    }
    for (int i = 0; i < subs; ++i) {
      auto f = std::make_unique<FakeEndpoint>("SUB " + std::to_string(i), &bell, by_mode);
      sub.push_back(f.get());
      s.push_back(std::move(f));
    }
    EngineConfig ec;
    ec.chip_callables = {"k0", "k1"};
    ec.sub_callables = {"s0"};
    char* base = mem;
    ec.host_visible = [base](uint64_t a, uint64_t n) {
      uint64_t b = reinterpret_cast<uintptr_t>(base);
      return a >= b && a + n <= b + kRing + kHost;
    };
    ec.heap_base = reinterpret_cast<uintptr_t>(mem);
    ec.heap_bytes = kRing;
    ec.heap_wait_ms = heap_wait_ms;
    ec.api = std::move(api);
    ec.at_every_fence = [this](const RunFence& f) {
      if (every_fence) TASKRING_RETURN_IF_ERROR(every_fence(f));
      return domains ? domains->at_every_fence(f) : Status::Ok();
    };
    ec.waiters_drive = waiters_drive;
    ec.driver_yield_ns = driver_yield_ns;
    engine = std::make_unique<Engine>(std::move(ec), std::move(c), std::move(s), &bell);
    if (exchange != nullptr) {
      DomainRegistryConfig dc;
      dc.exchange = exchange;
      domains = std::make_unique<DomainRegistry>(*engine, dc);
    }
    if (staged) engine->set_group_bell(&group_bell, countdowns, gates);
    engine->start();
  }
  ~Harness() {
    engine.reset();  // its fence hooks use the registry
    domains.reset();
    std::free(mem);
  }

  // Rows [at, at+rows) of one [kHost/256 x 64] FP32 host buffer: every
  // tensor of a test is a view of that one buffer, as the TensorMap keys
  // dependencies by buffer.
  ChipTensor tensor(uint32_t at_rows, uint32_t rows = 4) {
    ChipTensor whole = make_tensor_external(mem + kRing, {static_cast<uint32_t>(kHost / 256), 64});
    return whole.view({rows, 64}, {at_rows, 0});
  }

  std::shared_ptr<RunState> run(const std::function<Status(Orchestrator&)>& fn) {
    return engine->run_orchestration(fn, domains.get());
  }

  // Waits as RunHandle::wait does: driving the run where the engine lets
  // waiters drive.
  static Status wait(const std::shared_ptr<RunState>& r, uint64_t ms = 10000) {
    return Engine::wait_run(*r, Deadline::after_ms(ms));
  }

  ShmBell bell, group_bell;
  std::atomic<uint32_t> countdowns[8] = {};
  GroupGate gates[kGroupGates];  // staged harnesses queue groups behind groups
  char* mem = nullptr;
  std::vector<FakeEndpoint*> chip, sub;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<DomainRegistry> domains;  // with an exchange only
  // Called at every run's fence (EngineConfig::at_every_fence); set it
  // before the run starts.
  std::function<Status(const RunFence&)> every_fence;
};

// Arguments with one tensor and the mode scalar.
struct Args1 {
  Args1(const ChipTensor& t, TensorArgType tag, Mode m) : tensor(t) {
    args.add_tensor(tensor, tag);
    args.add_scalar(static_cast<uint64_t>(m));
  }
  ChipTensor tensor;
  ChipTaskArgs args;
};

}  // namespace taskring::node::testing
