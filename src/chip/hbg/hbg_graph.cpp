// hbg host half: Graph Execution (record, match, replay submission).
#include <cinttypes>
#include <cstdio>

#include "l2/task_shape.hpp"
#include "graph/submission.hpp"
#include "hbg_runtime.hpp"
#include "taskring/base/align.hpp"
#include "taskring/base/clock.hpp"

namespace taskring::hbg {

namespace {

std::string body_name(uint64_t key, const char* name) {
  if (name != nullptr) return name;
  char buf[40];
  std::snprintf(buf, sizeof(buf), "key 0x%016" PRIx64, key);
  return buf;
}

}  // namespace

void HbgRuntime::run_inline(const char* why, const std::string& body, GraphInvokeFn invoke, const void* closure,
                            const GraphTaskArgs& args, bool warn) {
  if (warn) {
    std::string msg = "Graph '" + body + "': " + why + "; running the body as ordinary tasks";
    l2::orchestration_log(PTO2LogLevel::WARN, "rt_submit_graph", msg.c_str());
  }
  invoke(args, closure);
}

GraphSubmitResult HbgRuntime::submit_graph(uint64_t key, const char* name, GraphInvokeFn invoke, const void* closure,
                                           const GraphTaskArgs& args) {
  GraphSubmitResult r;
  if (is_fatal()) return r;
  const std::string body = body_name(key, name);
  if (recording_ != nullptr) {
    recording_->fail("nested rt_submit_graph('" + body + "') inside the body; a Graph body cannot submit a Graph");
    return r;
  }
  const std::string where = "rt_submit_graph('" + body + "')";
  if (args.has_error()) {
    fail_args(where.c_str(), std::string("boundary: ") + args.error_msg());
    return r;
  }
  r.fallback = true;
  if (args.tensor_count() == 0) {
    run_inline("the boundary has no tensor", body, invoke, closure, args, true);
    ++gstats_.fallbacks;
    return r;
  }
  if (args.dependency_count() > 0) {
    run_inline("explicit dependencies on a boundary are not recordable", body, invoke, closure, args, true);
    ++gstats_.fallbacks;
    return r;
  }
  for (int i = 0; i < args.tensor_count(); ++i) {
    if (args.tag(i) == TensorArgType::OUTPUT) {
      run_inline(
          ("boundary tensor " + std::to_string(i) + " is OUTPUT (TensorCreateInfo); a boundary takes existing tensors")
              .c_str(),
          body, invoke, closure, args, true);
      ++gstats_.fallbacks;
      return r;
    }
    const ChipTensor& t = *args.tensor(i);
    Status s = t.validate();
    if (!s.ok() || t.address_space != AddressSpace::DEVICE || !config_.device->is_device_address(t.buffer.addr)) {
      fail_args(where.c_str(), "boundary tensor " + std::to_string(i) + ": " +
                                   (!s.ok() ? s.message() : "not a device tensor (" + t.describe() + ")"));
      return r;
    }
  }
  r.fallback = false;
  uint64_t full =
      graph_detail::fnv_bytes(&key, sizeof(key), graph_detail::fnv_bytes(&callable_key_, 8, graph_detail::kFnvOffset));
  auto it = definitions_.find(full);
  const bool new_in_run = used_keys_.count(full) == 0;
  if (new_in_run && used_keys_.size() >= static_cast<size_t>(GRAPH_MAX_DEFINITIONS)) {
    fail_args(where.c_str(), "more than " + std::to_string(GRAPH_MAX_DEFINITIONS) +
                                 " distinct Graph Definitions in one run (GRAPH_MAX_DEFINITIONS)");
    return r;
  }
  if (it == definitions_.end() && outside_dependent_keys_.count(full) != 0) {
    run_inline("", body, invoke, closure, args, false);
    ++gstats_.fallbacks;
    r.fallback = true;
    return r;
  }
  if (it == definitions_.end()) {
    uint64_t t0 = mono_ns();
    // One Recording reused for every recording (its arrays keep their capacity).
    std::unique_ptr<graph::Recording> rec = std::move(spare_recording_);
    if (rec == nullptr) rec = std::make_unique<graph::Recording>();
    rec->begin(body, full, args);
    recording_ = std::move(rec);
    invoke(recording_->boundary(), closure);
    rec = std::move(recording_);
    struct GiveBack {
      std::unique_ptr<graph::Recording>& spare;
      std::unique_ptr<graph::Recording>& rec;
      ~GiveBack() { spare = std::move(rec); }
    } give_back{spare_recording_, rec};
    if (!is_fatal() && rec->needs_outside_task()) {
      // Recording submitted nothing, so the body runs again, as ordinary
      // tasks that can wait for the outside task; so does every later call
      // with this key (one warning).
      gstats_.record_ns += mono_ns() - t0;
      outside_dependent_keys_.insert(full);
      run_inline((rec->error() + "; a Definition cannot hold a per-call outside task").c_str(), body, invoke, closure,
                 args, true);
      ++gstats_.fallbacks;
      r.fallback = true;
      return r;
    }
    auto def = std::make_unique<Definition>();
    def->body = body;
    Status s = is_fatal() ? Status::Ok() : rec->finish(args, &def->image, &execution_storage_bytes);
    gstats_.record_ns += mono_ns() - t0;
    if (is_fatal()) return r;
    if (!s.ok()) {
      report_fatal(PTO2_ERROR_INVALID_ARGS, s.message() + " (the run fails before upload)");
      return r;
    }
    gstats_.nodes_recorded += rec->node_count();
    ++gstats_.definitions_recorded;
    it = definitions_.emplace(full, std::move(def)).first;
    r.recorded = true;
  } else {
    std::string why = graph::boundary_mismatch(graph::DefinitionView{it->second->image.data()}, args);
    if (!why.empty()) {
      run_inline(("boundary mismatch with the recorded Definition: " + why).c_str(), body, invoke, closure, args, true);
      ++gstats_.fallbacks;
      r.fallback = true;
      return r;
    }
  }
  used_keys_.insert(full);
  if (!submit_outer(it->second.get(), args, &r)) return r;
  r.replayed = true;
  return r;
}

bool HbgRuntime::submit_outer(Definition* def, const GraphTaskArgs& args, GraphSubmitResult* result) {
  const char* op = "rt_submit_graph";
  const graph::DefinitionView v{def->image.data()};
  HostTask* t = nullptr;
  if (!new_task(op, &t)) return false;
  const uint32_t idx = cur_task_;
  const bool manual = scopes_.back() != 0;
  const int nt = args.tensor_count();
  if (!manual) {
    for (int i = 0; i < nt; ++i) collect_deps(*args.tensor(i), args.tag(i));
  }
  const uint64_t heap_bytes = align_up(v.h().required_heap, kHeapAlign) + align_up(v.h().storage_bytes, kHeapAlign);
  uint64_t heap_addr = 0;
  if (!heap_alloc(heap_bytes, op, &heap_addr)) return false;
  if (build_.fanin.size() > dep_limit_) {
    report_fatal(PTO2_ERROR_DEP_POOL_OVERFLOW, std::string(op) + ": the run's dependency edges exceed " +
                                                   std::to_string(dep_limit_) + "; raise PTO2_RING_DEP_POOL");
    return false;
  }
  t->kind = TaskKind::kGraph;
  t->tensor_count = 0;
  t->scalar_count = 0;
  t->fanin_count = static_cast<uint32_t>(build_.fanin.size()) - t->fanin_first;
  if (!manual) {
    for (int i = 0; i < nt; ++i) register_access(*args.tensor(i), args.tag(i), static_cast<int32_t>(idx));
  }
  // The submission image, in place in the pinned arena when it fits.
  auto p = std::make_unique<PendingSubmission>();
  p->def = def;
  p->bytes = graph::submission_bytes(static_cast<uint32_t>(nt), static_cast<uint32_t>(args.scalar_count()));
  p->host = arena_.try_place(p->bytes);
  if (p->host == nullptr) {
    if (!p->fallback.assign_zero(p->bytes)) {
      report_fatal(PTO2_ERROR_INVALID_ARGS, "rt_submit_graph: out of host memory for a submission image");
      return false;
    }
    p->host = p->fallback.data();
    ++gstats_.arena_fallback_submissions;
  } else {
    ++gstats_.arena_submissions;
  }
  auto* s = reinterpret_cast<graph::GraphSubmission*>(p->host);
  *s = graph::GraphSubmission{};
  s->magic = graph::kSubmissionMagic;
  s->full_key = v.h().full_key;
  s->definition_hash = v.h().content_hash;
  s->definition_bytes = v.h().total_bytes;
  s->heap_base = heap_addr;
  s->heap_bytes = heap_bytes;
  s->tensor_count = static_cast<uint32_t>(nt);
  s->scalar_count = static_cast<uint32_t>(args.scalar_count());
  s->tensors_off = sizeof(graph::GraphSubmission);
  s->scalars_off = static_cast<uint32_t>(sizeof(graph::GraphSubmission) + sizeof(ChipTensor) * nt);
  s->total_bytes = p->bytes;
  auto* tensors = reinterpret_cast<ChipTensor*>(p->host + s->tensors_off);
  for (int i = 0; i < nt; ++i) tensors[i] = *args.tensor(i);
  auto* scalars = reinterpret_cast<uint64_t*>(p->host + s->scalars_off);
  for (int i = 0; i < args.scalar_count(); ++i) scalars[i] = args.scalar(i);
  t->submission = static_cast<uint32_t>(submissions_.size());
  submissions_.push_back(std::move(p));
  ++gstats_.graph_tasks;
  result->task_id = PTO2TaskId::make(0, idx);
  return true;
}

}  // namespace taskring::hbg
