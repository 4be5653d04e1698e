// A host program that uses an installed taskring (examples/consumer/README.md):
// one orchestration function, run first on a sim chip (L2, the tmr runtime)
// and then on a node of two chips (L3, one forked child process per chip).
// Exits 0 only when every result element is right.
#include <cstdio>
#include <string>
#include <vector>

#include "taskring/chip/chip_worker.hpp"
// The orchestration below calls the orchestration API; chip_worker.hpp alone
// gives host code only the types it shares with orchestrations.
#include "taskring/chip/orchestration_api.hpp"
#include "taskring/kernels/builtin_ids.hpp"
#include "taskring/log/init.hpp"
#include "taskring/node/node_worker.hpp"

namespace {

using namespace taskring;
namespace kid = kernels::builtin_id;

constexpr uint32_t kRows = 64, kCols = 64, kElems = kRows * kCols;

// out = (a + b) * b: two tasks on the chip; the second depends on the first
// through c, an intermediate that lives only in device memory.
void add_then_mul(const ChipTaskArgs& args) {
  const ChipTensor& a = *args.tensor(0);
  const ChipTensor& b = *args.tensor(1);
  const ChipTensor& out = *args.tensor(2);
  TensorCreateInfo c_info({kRows, kCols}, DataType::FLOAT32);
  CoreTaskArgs add;
  add.add_input(a).add_input(b).add_output(c_info);
  const TaskOutputTensors added = rt_submit_aiv_task(kid::kAdd, add);
  const ChipTensor& c = added.get_ref(0);
  CoreTaskArgs mul;
  mul.add_input(c).add_input(b).add_output(out);
  rt_submit_aiv_task(kid::kMul, mul);
}

ChipCallable callable() {
  ChipCallable c;
  c.name = "add_then_mul";
  c.entry = add_then_mul;  // builtin kernels need no binding
  return c;
}

// Counts the elements of `out` that differ from `want`.
int wrong(const float* out, float want) {
  int n = 0;
  for (uint32_t i = 0; i < kElems; ++i) n += out[i] != want;
  return n;
}

int run_on_chip() {
  auto worker = ChipWorker::create(ChipWorkerConfig{});  // device "sim", runtime "tmr"
  if (!worker.ok()) return std::printf("chip: %s\n", worker.status().to_string().c_str()), 1;
  auto id = (*worker)->register_callable(callable());
  if (!id.ok()) return std::printf("chip: %s\n", id.status().to_string().c_str()), 1;
  std::vector<float> a(kElems, 2.0f), b(kElems, 3.0f), out(kElems, 0.0f);
  const ChipTensor ta = make_tensor_external(a.data(), {kRows, kCols});
  const ChipTensor tb = make_tensor_external(b.data(), {kRows, kCols});
  const ChipTensor tout = make_tensor_external(out.data(), {kRows, kCols});
  ChipTaskArgs args;
  args.add_input(ta).add_input(tb).add_output(tout);
  auto report = (*worker)->run(*id, args);
  if (!report.ok()) return std::printf("chip: %s\n", report.status().to_string().c_str()), 1;
  const int bad = wrong(out.data(), 15.0f);
  std::printf("chip: %llu tasks, out[0] = %g, %d wrong elements\n",
              static_cast<unsigned long long>(report->stats.tasks_completed), out[0], bad);
  return bad == 0 ? 0 : 1;
}

// The same callable on both chips of a node, one task per chip, each on its
// own half of the inputs (arrays in the node's shared heap).
int run_on_node() {
  node::NodeConfig config;
  config.chips = 2;
  node::NodeWorker node(config);
  auto id = node.register_chip(callable());
  if (!id.ok()) return std::printf("node: %s\n", id.status().to_string().c_str()), 1;
  if (Status s = node.init(); !s.ok()) return std::printf("node: %s\n", s.to_string().c_str()), 1;
  float* arrays[2][3];
  for (auto& chip : arrays) {
    for (float*& p : chip) {
      auto mem = node.alloc_shared(kElems * sizeof(float));
      if (!mem.ok()) return std::printf("node: %s\n", mem.status().to_string().c_str()), 1;
      p = static_cast<float*>(*mem);
    }
  }
  for (int chip = 0; chip < 2; ++chip) {
    for (uint32_t i = 0; i < kElems; ++i) arrays[chip][0][i] = 1.0f + chip, arrays[chip][1][i] = 4.0f;
  }
  Status s = node.run([&](node::Orchestrator& o) -> Status {
    for (int chip = 0; chip < 2; ++chip) {
      const ChipTensor a = make_tensor_external(arrays[chip][0], {kRows, kCols});
      const ChipTensor b = make_tensor_external(arrays[chip][1], {kRows, kCols});
      const ChipTensor out = make_tensor_external(arrays[chip][2], {kRows, kCols});
      ChipTaskArgs args;
      args.add_input(a).add_input(b).add_output(out);
      TASKRING_RETURN_IF_ERROR(o.submit_next_level(*id, args, chip));
    }
    return Status::Ok();
  });
  if (!s.ok()) return std::printf("node: %s\n", s.to_string().c_str()), 1;
  const int bad = wrong(arrays[0][2], 20.0f) + wrong(arrays[1][2], 24.0f);
  std::printf("node: 2 chips, out[0] = %g and %g, %d wrong elements\n", arrays[0][2][0], arrays[1][2][0], bad);
  if (Status c = node.close(); !c.ok()) return std::printf("node: close: %s\n", c.to_string().c_str()), 1;
  return bad == 0 ? 0 : 1;
}

}  // namespace

int main() {
  // TASKRING_LOG_LEVEL and TASKRING_STRACE_DIR apply once read (docs/logging.md);
  // at the default level every run writes its timing spans to stderr.
  if (Status s = log::init_logging(process_env()); !s.ok()) return std::printf("%s\n", s.to_string().c_str()), 2;
  const int rc = run_on_chip() | run_on_node();
  std::printf("consumer: %s\n", rc == 0 ? "ok" : "FAILED");
  return rc;
}
