// The node part of the C ABI (include/taskring/c_api.h).
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "taskring/c_api.h"
#include "taskring/node/node_worker.hpp"

#include "c_api_callable.hpp"
#include "c_api_common.hpp"

using taskring::ChipTaskArgs;
using taskring::Status;
using taskring::node::NodeWorker;
using taskring::node::Orchestrator;

struct taskring_node {
  std::unique_ptr<NodeWorker> worker;
};
struct taskring_orch {
  Orchestrator* orch;
};
struct taskring_run_handle {
  taskring::node::RunHandle handle;
};

namespace {

using taskring::c_abi::fail;
using taskring::c_abi::from;
using taskring::c_abi::guarded;
using taskring::c_abi::ok;

Status need(const void* p, const char* fn, const char* what) {
  if (p == nullptr) return taskring::invalid_argument(std::string(fn) + ": null " + what);
  return Status::Ok();
}

using taskring::c_abi::build_args;

Status call_orch(taskring_orch_fn fn, void* user, Orchestrator& o) {
  taskring_orch handle{&o};
  taskring_error e{};
  int32_t rc = fn(&handle, user, &e);
  if (rc == TASKRING_OK) return Status::Ok();
  int c = rc < 1 || rc > static_cast<int>(taskring::StatusCode::kUnavailable)
              ? static_cast<int>(taskring::StatusCode::kInternal)
              : rc;
  return Status(static_cast<taskring::StatusCode>(c),
                e.message[0] ? std::string(e.message) : "orchestration callback returned " + std::to_string(rc));
}

}  // namespace

extern "C" {

int32_t taskring_node_create(const taskring_node_config* c, taskring_node** out, taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    Status s = need(c, "taskring_node_create", "config");
    if (s.ok()) s = need(out, "taskring_node_create", "out");
    if (!s.ok()) return fail(err, s);
    taskring::node::NodeConfig cfg;
    cfg.chips = c->chips;
    cfg.sub_workers = c->sub_workers;
    if (c->runtime) cfg.runtime = c->runtime;
    if (c->heap_ring_bytes) cfg.heap_ring_bytes = c->heap_ring_bytes;
    if (c->shared_bytes) cfg.shared_bytes = c->shared_bytes;
    if (c->startup_timeout_ms) cfg.startup_timeout_ms = c->startup_timeout_ms;
    auto* n = new taskring_node;
    n->worker = std::make_unique<NodeWorker>(cfg);
    *out = n;
    return ok(err);
  });
}

void taskring_node_destroy(taskring_node* node) {
  try {
    delete node;
  } catch (...) {
  }
}

int32_t taskring_node_register_chip(taskring_node* n, const taskring_callable_desc* d, int32_t* out_id,
                                    taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    Status s = need(n, "taskring_node_register_chip", "node");
    if (s.ok()) s = need(d, "taskring_node_register_chip", "desc");
    if (s.ok()) s = need(out_id, "taskring_node_register_chip", "out_id");
    if (s.ok() && (d->kernel_count < 0 || (d->kernel_count > 0 && d->kernels == nullptr)))
      s = taskring::invalid_argument("taskring_node_register_chip: bad kernel array");
    if (!s.ok()) return fail(err, s);
    taskring::ChipCallable c = taskring::chip_callable_from_desc(*d);
    auto id = n->worker->register_chip(c);
    if (!id.ok()) return fail(err, id.status());
    *out_id = *id;
    return ok(err);
  });
}

int32_t taskring_node_register_sub(taskring_node* n, const char* name, taskring_sub_fn fn, void* user, int32_t* out_id,
                                   taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    Status s = need(n, "taskring_node_register_sub", "node");
    if (s.ok()) s = need(name, "taskring_node_register_sub", "name");
    if (s.ok()) s = need(reinterpret_cast<const void*>(fn), "taskring_node_register_sub", "function");
    if (s.ok()) s = need(out_id, "taskring_node_register_sub", "out_id");
    if (!s.ok()) return fail(err, s);
    auto id = n->worker->register_sub(name, [fn, user](const ChipTaskArgs& a) -> Status {
      std::vector<taskring_tensor> tensors(static_cast<size_t>(a.tensor_count()));
      std::vector<int32_t> tags(tensors.size());
      for (int i = 0; i < a.tensor_count(); ++i) {
        std::memcpy(&tensors[static_cast<size_t>(i)], a.tensor(i), sizeof(taskring_tensor));
        tags[static_cast<size_t>(i)] = static_cast<int32_t>(a.tag(i));
      }
      taskring_error e{};
      int32_t rc = fn(tensors.data(), tags.data(), a.tensor_count(), a.scalars(), a.scalar_count(), user, &e);
      if (rc == TASKRING_OK) return Status::Ok();
      return taskring::internal_error(std::string("SUB callback returned ") + std::to_string(rc) + ": " + e.message);
    });
    if (!id.ok()) return fail(err, id.status());
    *out_id = *id;
    return ok(err);
  });
}

int32_t taskring_node_init(taskring_node* n, taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    Status s = need(n, "taskring_node_init", "node");
    return from(err, s.ok() ? n->worker->init() : s);
  });
}

int32_t taskring_node_alloc_shared(taskring_node* n, uint64_t bytes, void** out, taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    Status s = need(n, "taskring_node_alloc_shared", "node");
    if (s.ok()) s = need(out, "taskring_node_alloc_shared", "out");
    if (!s.ok()) return fail(err, s);
    auto p = n->worker->alloc_shared(bytes);
    if (!p.ok()) return fail(err, p.status());
    *out = *p;
    return ok(err);
  });
}

int32_t taskring_node_submit(taskring_node* n, taskring_orch_fn fn, void* user, taskring_run_handle** out,
                             taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    Status s = need(n, "taskring_node_submit", "node");
    if (s.ok()) s = need(reinterpret_cast<const void*>(fn), "taskring_node_submit", "orchestration");
    if (s.ok()) s = need(out, "taskring_node_submit", "out");
    if (!s.ok()) return fail(err, s);
    auto* r = new taskring_run_handle;
    r->handle = n->worker->submit([fn, user](Orchestrator& o) { return call_orch(fn, user, o); });
    *out = r;
    return ok(err);
  });
}

int32_t taskring_node_run_wait(taskring_run_handle* r, uint64_t timeout_ms, taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    Status s = need(r, "taskring_node_run_wait", "run");
    return from(err, s.ok() ? r->handle.wait(taskring::Deadline::after_ms(timeout_ms)) : s);
  });
}

void taskring_node_run_release(taskring_run_handle* r) { delete r; }

int32_t taskring_node_run(taskring_node* n, taskring_orch_fn fn, void* user, uint64_t timeout_ms, taskring_error* err) {
  taskring_run_handle* r = nullptr;
  int32_t rc = taskring_node_submit(n, fn, user, &r, err);
  if (rc != TASKRING_OK) return rc;
  rc = taskring_node_run_wait(r, timeout_ms, err);
  taskring_node_run_release(r);
  return rc;
}

int32_t taskring_node_close(taskring_node* n, taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    Status s = need(n, "taskring_node_close", "node");
    return from(err, s.ok() ? n->worker->close() : s);
  });
}

int32_t taskring_orch_submit_chip(taskring_orch* o, int32_t callable_id, const taskring_arg* args, int32_t n_args,
                                  const uint64_t* scalars, int32_t n_scalars, int32_t chip, taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    Status s = need(o, "taskring_orch_submit_chip", "orchestrator");
    ChipTaskArgs a;
    if (s.ok()) s = build_args("taskring_orch_submit_chip", args, n_args, scalars, n_scalars, &a);
    if (!s.ok()) return fail(err, s);
    return from(err, o->orch->submit_next_level(callable_id, a, chip));
  });
}

int32_t taskring_orch_submit_sub(taskring_orch* o, int32_t callable_id, const taskring_arg* args, int32_t n_args,
                                 const uint64_t* scalars, int32_t n_scalars, taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    Status s = need(o, "taskring_orch_submit_sub", "orchestrator");
    ChipTaskArgs a;
    if (s.ok()) s = build_args("taskring_orch_submit_sub", args, n_args, scalars, n_scalars, &a);
    if (!s.ok()) return fail(err, s);
    return from(err, o->orch->submit_sub(callable_id, a));
  });
}

}  // extern "C"
