#include "schedule_fuzz.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <vector>

#include "taskring/chip/ring_config.hpp"

namespace taskring::sanitize {

namespace {

// The bytes of every tensor argument (host memory or device memory).
struct ArgBytes {
  std::vector<std::vector<uint8_t>> bytes;
};

bool compared(TensorArgType t) { return t == TensorArgType::INOUT || t == TensorArgType::OUTPUT_EXISTING; }

Status capture(const ChipTaskArgs& args, Device& device, bool only_outputs, ArgBytes* out) {
  out->bytes.assign(static_cast<size_t>(args.tensor_count()), {});
  for (int i = 0; i < args.tensor_count(); ++i) {
    if (only_outputs && !compared(args.tag(i))) continue;
    const ChipTensor& t = *args.tensor(i);
    std::vector<uint8_t>& b = out->bytes[static_cast<size_t>(i)];
    b.resize(t.buffer.size);
    if (t.address_space == AddressSpace::HOST) {
      if (!b.empty())
        std::memcpy(b.data(), reinterpret_cast<const void*>(static_cast<uintptr_t>(t.buffer.addr)), b.size());
    } else if (!b.empty()) {
      TASKRING_RETURN_IF_ERROR(device.copy_from_device(b.data(), t.buffer.addr, b.size()));
    }
  }
  return Status::Ok();
}

Status restore(const ChipTaskArgs& args, Device& device, const ArgBytes& from) {
  for (int i = 0; i < args.tensor_count(); ++i) {
    const ChipTensor& t = *args.tensor(i);
    const std::vector<uint8_t>& b = from.bytes[static_cast<size_t>(i)];
    if (b.empty()) continue;
    if (t.address_space == AddressSpace::HOST) {
      std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(t.buffer.addr)), b.data(), b.size());
    } else {
      TASKRING_RETURN_IF_ERROR(device.copy_to_device(t.buffer.addr, b.data(), b.size()));
    }
  }
  return Status::Ok();
}

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

ScheduleChoice choose(const ScheduleOptions& opt, int run, const RunStats& first) {
  ScheduleChoice c;
  c.run = run;
  c.seed = opt.base_seed + static_cast<uint64_t>(run - 1);
  uint64_t s = c.seed;
  c.executors = 1 + static_cast<int>(splitmix(s) % 4);
  if (opt.tmr) {
    // Twice what run 0 used in all, times 1, 2 or 4: the program fits
    // without wrapping a ring.
    const uint64_t tasks = std::bit_ceil(std::max<uint64_t>(4, 2 * first.tasks_submitted));
    if (tasks <= kDefaultTaskWindow) c.task_window = std::min(kDefaultTaskWindow, tasks << (splitmix(s) % 3));
    const uint64_t heap = std::max(kMinRingHeap, (2 * first.heap_bytes + kHeapAlign - 1) / kHeapAlign * kHeapAlign);
    if (heap <= kDefaultRingHeap) c.heap = std::min(kDefaultRingHeap, heap << (splitmix(s) % 3));
  }
  return c;
}

std::string byte_hex(uint8_t v) {
  char b[8];
  std::snprintf(b, sizeof(b), "0x%02x", v);
  return b;
}

}  // namespace

std::string ScheduleChoice::describe() const {
  if (run == 0) return "run 0 (the reference: the worker as configured)";
  std::string s = "run " + std::to_string(run) + " (seed " + std::to_string(seed) + ": " + std::to_string(executors) +
                  " executor" + (executors == 1 ? "" : "s");
  if (task_window != 0) s += ", task window " + std::to_string(task_window);
  if (heap != 0) s += ", heap " + std::to_string(heap) + " bytes";
  return s + ")";
}

Expected<RunReport> run_schedules(const ScheduleOptions& opt, const ChipTaskArgs& args, Device& device,
                                  const ScheduleHooks& hooks) {
  ArgBytes before, first, now;
  TASKRING_RETURN_IF_ERROR(capture(args, device, false, &before));
  WriteLog log0, logk;
  log0.begin_run(0);
  TASKRING_ASSIGN_OR_RETURN(RunReport report, hooks.run_once(ScheduleChoice{}, &log0));
  TASKRING_RETURN_IF_ERROR(capture(args, device, true, &first));
  std::vector<uint64_t> addr0(static_cast<size_t>(args.tensor_count()));
  for (int i = 0; i < args.tensor_count(); ++i) addr0[static_cast<size_t>(i)] = hooks.device_addr(i);
  for (int run = 1; run < opt.runs; ++run) {
    const ScheduleChoice c = choose(opt, run, report.stats);
    const std::string what = "TASKRING_SANITIZE=schedule: " + c.describe();
    TASKRING_RETURN_IF_ERROR(restore(args, device, before));
    logk.begin_run(c.seed);
    Expected<RunReport> r = hooks.run_once(c, &logk);
    if (!r.ok()) return r.status().with_context(what);
    TASKRING_RETURN_IF_ERROR(capture(args, device, true, &now));
    for (int i = 0; i < args.tensor_count(); ++i) {
      const auto& a = first.bytes[static_cast<size_t>(i)];
      const auto& b = now.bytes[static_cast<size_t>(i)];
      auto [pa, pb] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
      if (pa == a.end()) continue;
      const uint64_t off = static_cast<uint64_t>(pa - a.begin());
      const std::string w0 = log0.last_writer(addr0[static_cast<size_t>(i)] + off).value_or("no task");
      const std::string wk = logk.last_writer(hooks.device_addr(i) + off).value_or("no task");
      return Status(StatusCode::kAborted,
                    "SCHEDULE_MISMATCH: " + what + " differs from run 0: entry argument " + std::to_string(i) + " (" +
                        std::string(tensor_arg_type_name(args.tag(i))) + ") byte " + std::to_string(off) + " is " +
                        byte_hex(*pa) + " after run 0 and " + byte_hex(*pb) + " after run " + std::to_string(run) +
                        "; written last by " + w0 + " in run 0 and by " + wk + " in run " + std::to_string(run) +
                        ": a dependency the tags do not declare. Reproduce: TASKRING_SANITIZE=schedule:2 "
                        "TASKRING_SANITIZE_SEED=" +
                        std::to_string(c.seed));
    }
  }
  return report;
}

}  // namespace taskring::sanitize
