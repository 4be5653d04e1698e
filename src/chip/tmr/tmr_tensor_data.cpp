// get/set_tensor_data on tmr: the orchestrator reads or writes one element
// of a tensor once every task it must follow (its creator, earlier writers,
// and for a write earlier readers) is done, running ready tasks itself when
// the run is inline.
#include <cstring>
#include <string>
#include <vector>

#include "l2/element_access.hpp"
#include "task_name.hpp"
#include "tmr_runtime.hpp"

namespace taskring::tmr {

bool TmrRuntime::tensor_access(const ChipTensor& t, uint32_t ndims, const uint32_t* idx, void* data, uint32_t bytes,
                               bool write) {
  const char* op = write ? "set_tensor_data" : "get_tensor_data";
  if (is_fatal()) return false;
  auto found = l2::locate_element(*config_.device, t, ndims, idx, bytes);
  if (!found.ok()) {
    fail_args(op, found.status().message());
    return false;
  }
  // The element as a 1-element view: wait for its creator and every earlier
  // writer (and, to write, every earlier reader) that overlaps it.
  const ChipTensor& elem = found->view;
  std::vector<TaskSlot*> waits;
  if (TaskSlot* p = slot_of(t.owner_task_id)) waits.push_back(p);
  if (!t.manual_dep) {
    // A read removes nothing; a write probe would drop covered entries, so
    // collect via a reader probe plus an explicit reader scan when writing.
    tensor_map_.for_each_dependency(elem, false, [&](deps::Owner* o) { waits.push_back(TaskSlot::of(o)); });
    if (write) {
      // Tasks submitted later must still order after this write: register it
      // as if a writer task covering the element had run, by waiting for all
      // readers too.
      tensor_map_.for_each_dependency(elem, true, [&](deps::Owner* o) { waits.push_back(TaskSlot::of(o)); });
    }
  }
  Deadline deadline = Deadline::after_ms(config_.tensor_wait_timeout_ms);
  for (TaskSlot* p : waits) {
    PTO2TaskId id = p->id;
    auto done = [&] { return is_fatal() || p->id != id || p->fanout.load(std::memory_order_seq_cst) == kFanoutClosed; };
    if (tasks_here_) {
      // Nobody else runs tasks: run them here until the producer is done.
      while (!done() && run_one_inline()) {
      }
      if (is_fatal()) return false;
      if (!done()) {
        report_fatal(PTO2_ERROR_TENSOR_WAIT_TIMEOUT,
                     std::string(op) + ": " + tmr::task_name(id) + " cannot complete (inline run, nothing ready)");
        return false;
      }
      continue;
    }
    gate_.wake_if_deferred();  // an orchestrating caller's first task (RunRequest::orchestrate_here)
    NotFeeding waiting(orch_feeding_);
    wake_on_completion_.store(true, std::memory_order_seq_cst);
    Status w = ring_progress_.wait(done, deadline, op);
    wake_on_completion_.store(false, std::memory_order_relaxed);
    if (is_fatal()) return false;
    if (!w.ok()) {
      report_fatal(PTO2_ERROR_TENSOR_WAIT_TIMEOUT, std::string(op) + ": " + tmr::task_name(id) +
                                                       " did not complete within " +
                                                       std::to_string(config_.tensor_wait_timeout_ms) + " ms");
      return false;
    }
  }
  void* p = config_.device->device_view_unchecked(found->addr);
  if (write)
    std::memcpy(p, data, bytes);
  else
    std::memcpy(data, p, bytes);
  return true;
}

}  // namespace taskring::tmr
