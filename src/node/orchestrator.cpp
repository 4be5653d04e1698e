// Orchestrator: forwards to the Engine with the run it belongs to.
#include "taskring/node/orchestrator.hpp"

#include "dag/engine.hpp"
#include "domain_registry.hpp"

namespace taskring::node {

Status Orchestrator::submit_next_level(int callable, const ChipTaskArgs& args, int chip) {
  const ChipTaskArgs* a[1] = {&args};
  const int c[1] = {chip};
  return engine_->submit(run_, false, callable, a, c, "submit_next_level");
}

Status Orchestrator::submit_next_level_group(int callable, std::span<const ChipTaskArgs* const> args,
                                             std::span<const int> chips) {
  return engine_->submit(run_, false, callable, args, chips, "submit_next_level_group");
}

Status Orchestrator::submit_sub(int callable, const ChipTaskArgs& args) {
  const ChipTaskArgs* a[1] = {&args};
  return engine_->submit(run_, true, callable, a, {}, "submit_sub");
}

Status Orchestrator::submit_sub_group(int callable, std::span<const ChipTaskArgs* const> args) {
  return engine_->submit(run_, true, callable, args, {}, "submit_sub_group");
}

Status Orchestrator::scope_begin() { return engine_->scope_begin(run_); }
Status Orchestrator::scope_end() { return engine_->scope_end(run_); }

Expected<ChipTensor> Orchestrator::alloc(std::span<const uint32_t> shapes, DataType dtype) {
  return engine_->alloc(run_, shapes, dtype);
}

Expected<uint64_t> Orchestrator::malloc(int chip, uint64_t bytes) {
  ControlRequest r;
  r.op = ControlOp::kMalloc;
  r.args[0] = bytes;
  return engine_->control(chip, r, "Orchestrator::malloc");
}

Status Orchestrator::free(int chip, uint64_t device_addr) {
  TASKRING_RETURN_IF_ERROR(engine_->drain_submitted(run_, "Orchestrator::free"));
  ControlRequest r;
  r.op = ControlOp::kFree;
  r.args[0] = device_addr;
  return engine_->control(chip, r, "Orchestrator::free").status();
}

Status Orchestrator::copy_to(int chip, uint64_t device_addr, const void* host, uint64_t bytes) {
  if (!engine_->host_visible(reinterpret_cast<uintptr_t>(host), bytes))
    return invalid_argument(
        "Orchestrator::copy_to: host range is not in the node's shared heap; the chip child "
        "cannot read it (use NodeWorker::alloc_shared or Orchestrator::alloc)");
  TASKRING_RETURN_IF_ERROR(engine_->drain_submitted(run_, "Orchestrator::copy_to"));
  ControlRequest r;
  r.op = ControlOp::kCopyTo;
  r.args[0] = device_addr;
  r.args[1] = reinterpret_cast<uintptr_t>(host);
  r.args[2] = bytes;
  return engine_->control(chip, r, "Orchestrator::copy_to").status();
}

Status Orchestrator::copy_from(int chip, void* host, uint64_t device_addr, uint64_t bytes) {
  if (!engine_->host_visible(reinterpret_cast<uintptr_t>(host), bytes))
    return invalid_argument(
        "Orchestrator::copy_from: host range is not in the node's shared heap; the chip child "
        "cannot write it (use NodeWorker::alloc_shared or Orchestrator::alloc)");
  TASKRING_RETURN_IF_ERROR(engine_->drain_submitted(run_, "Orchestrator::copy_from"));
  ControlRequest r;
  r.op = ControlOp::kCopyFrom;
  r.args[0] = reinterpret_cast<uintptr_t>(host);
  r.args[1] = device_addr;
  r.args[2] = bytes;
  return engine_->control(chip, r, "Orchestrator::copy_from").status();
}

Expected<std::shared_ptr<CommDomain>> Orchestrator::allocate_domain(const std::string& name, std::span<const int> chips,
                                                                    uint64_t window_size,
                                                                    std::span<const DomainBufferSpec> buffers) {
  if (domains_ == nullptr) return unimplemented("allocate_domain('" + name + "'): this node has no comm transport");
  return domains_->allocate(run_, name, chips, window_size, buffers);
}

Expected<std::shared_ptr<CommDomain>> Orchestrator::allocate_global_domain(const std::string& name,
                                                                           std::span<const GlobalMember> members,
                                                                           uint64_t window_size,
                                                                           std::span<const DomainBufferSpec> buffers) {
  if (domains_ == nullptr)
    return unimplemented("allocate_global_domain('" + name + "'): this node has no comm transport");
  return domains_->allocate_global(run_, name, members, window_size, buffers);
}

int Orchestrator::chips() const { return engine_->chips(); }
int Orchestrator::sub_workers() const { return engine_->subs(); }

}  // namespace taskring::node
