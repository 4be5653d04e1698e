// The C ABI over ChipWorker (include/taskring/c_api.h).
#include "taskring/c_api.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>

#include "taskring/chip/chip_worker.hpp"

#include "c_api_callable.hpp"
#include "c_api_common.hpp"

static_assert(sizeof(taskring_tensor) == sizeof(taskring::ChipTensor));
static_assert(alignof(taskring_tensor) == alignof(taskring::ChipTensor));

struct taskring_worker {
  std::unique_ptr<taskring::ChipWorker> worker;
  // ChipTaskArgs holds pointers to descriptors: the prepared arguments live
  // here until finalize.
  std::unique_ptr<taskring::ChipTaskArgs> pending;
};

namespace {

using taskring::c_abi::fail;
using taskring::c_abi::guarded;
using taskring::c_abi::ok;

int32_t need_worker(taskring_worker* w, taskring_error* err, const char* fn) {
  if (w == nullptr || !w->worker) return fail(err, taskring::invalid_argument(std::string(fn) + ": null worker"));
  return TASKRING_OK;
}

void fill_report(const taskring::RunReport& r, taskring_run_report* out) {
  if (out == nullptr) return;
  std::memset(out, 0, sizeof(*out));
  out->tasks_submitted = r.stats.tasks_submitted;
  out->tasks_completed = r.stats.tasks_completed;
  out->kernel_calls = r.stats.kernel_calls;
  out->h2d_calls = r.h2d_calls;
  out->h2d_bytes = r.h2d_bytes;
  out->d2h_calls = r.d2h_calls;
  out->d2h_bytes = r.d2h_bytes;
  out->bind_ns = r.bind_ns;
  out->run_ns = r.run_ns;
  out->validate_ns = r.validate_ns;
  out->orch_ns = r.stats.orch_end_ns - r.stats.orch_start_ns;
  out->sched_ns = r.stats.sched_end_ns > r.stats.sched_start_ns ? r.stats.sched_end_ns - r.stats.sched_start_ns : 0;
  out->invocation_id = r.invocation_id;
  out->skipped_device_run = r.skipped_device_run ? 1 : 0;
}

}  // namespace

extern "C" {

int32_t taskring_worker_create(const char* device, const char* runtime, taskring_worker** out, taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    if (out == nullptr) return fail(err, taskring::invalid_argument("taskring_worker_create: null out"));
    *out = nullptr;
    taskring::ChipWorkerConfig c;
    if (device != nullptr) c.device = device;
    if (runtime != nullptr) c.runtime = runtime;
    auto w = taskring::ChipWorker::create(c);
    if (!w.ok()) return fail(err, w.status());
    *out = new taskring_worker{std::move(w).value(), nullptr};
    return ok(err);
  });
}

void taskring_worker_destroy(taskring_worker* worker) {
  try {
    delete worker;
  } catch (...) {
  }
}

int32_t taskring_make_tensor(uint64_t ptr, const uint32_t* shapes, uint32_t ndims, int32_t dtype, int32_t on_device,
                             taskring_tensor* out, taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    if (out == nullptr || shapes == nullptr)
      return fail(err, taskring::invalid_argument("taskring_make_tensor: null pointer"));
    if (ndims < 1 || ndims > taskring::MAX_TENSOR_DIMS) {
      return fail(err,
                  taskring::invalid_argument("taskring_make_tensor: ndims " + std::to_string(ndims) + " outside 1..5"));
    }
    // DataType is a uint8_t: check the range before the cast truncates
    // (4096 would otherwise read as FLOAT32).
    auto dt = static_cast<taskring::DataType>(dtype);
    if (dtype < 0 || dtype > UINT8_MAX || !taskring::is_valid_data_type(dt)) {
      return fail(err, taskring::invalid_argument("taskring_make_tensor: dtype " + std::to_string(dtype) +
                                                  " is not a DataType"));
    }
    uint64_t n = 1;
    for (uint32_t i = 0; i < ndims; ++i) n *= shapes[i];
    auto t =
        taskring::try_make_tensor(ptr, n * taskring::element_size(dt), std::span<const uint32_t>(shapes, ndims), dt,
                                  false, 0, on_device ? taskring::AddressSpace::DEVICE : taskring::AddressSpace::HOST);
    if (!t.ok()) return fail(err, t.status());
    std::memcpy(out, &*t, sizeof(*out));
    return ok(err);
  });
}

int32_t taskring_register_callable(taskring_worker* w, const taskring_callable_desc* d, int32_t* out_id,
                                   taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    if (int32_t rc = need_worker(w, err, "taskring_register_callable")) return rc;
    if (d == nullptr || out_id == nullptr)
      return fail(err, taskring::invalid_argument("taskring_register_callable: null desc or out_id"));
    if (d->kernel_count < 0 || (d->kernel_count > 0 && d->kernels == nullptr)) {
      return fail(err, taskring::invalid_argument("taskring_register_callable: bad kernel array"));
    }
    taskring::ChipCallable c = taskring::chip_callable_from_desc(*d);
    auto id = w->worker->register_callable(c);
    if (!id.ok()) return fail(err, id.status());
    *out_id = *id;
    return ok(err);
  });
}

int32_t taskring_prepare(taskring_worker* w, int32_t callable_id, const taskring_arg* args, int32_t n_args,
                         const uint64_t* scalars, int32_t n_scalars, taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    if (int32_t rc = need_worker(w, err, "taskring_prepare")) return rc;
    auto pending = std::make_unique<taskring::ChipTaskArgs>();
    taskring::Status s =
        taskring::c_abi::build_args("taskring_prepare", args, n_args, scalars, n_scalars, pending.get());
    if (!s.ok()) return fail(err, s);
    s = w->worker->prepare(callable_id, *pending);
    if (!s.ok()) return fail(err, s);
    w->pending = std::move(pending);
    return ok(err);
  });
}

int32_t taskring_launch(taskring_worker* w, taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    if (int32_t rc = need_worker(w, err, "taskring_launch")) return rc;
    taskring::Status s = w->worker->launch();
    return s.ok() ? ok(err) : fail(err, s);
  });
}

int32_t taskring_poll(taskring_worker* w, int32_t* done, taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    if (int32_t rc = need_worker(w, err, "taskring_poll")) return rc;
    if (done == nullptr) return fail(err, taskring::invalid_argument("taskring_poll: null done"));
    auto r = w->worker->poll();
    if (!r.ok()) return fail(err, r.status());
    *done = *r;
    return ok(err);
  });
}

int32_t taskring_wait(taskring_worker* w, taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    if (int32_t rc = need_worker(w, err, "taskring_wait")) return rc;
    taskring::Status s = w->worker->wait();
    return s.ok() ? ok(err) : fail(err, s);
  });
}

int32_t taskring_finalize(taskring_worker* w, taskring_run_report* report, taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    if (int32_t rc = need_worker(w, err, "taskring_finalize")) return rc;
    auto r = w->worker->finalize();
    w->pending.reset();
    if (!r.ok()) return fail(err, r.status());
    fill_report(*r, report);
    return ok(err);
  });
}

int32_t taskring_run(taskring_worker* w, int32_t callable_id, const taskring_arg* args, int32_t n_args,
                     const uint64_t* scalars, int32_t n_scalars, taskring_run_report* report, taskring_error* err) {
  if (int32_t rc = taskring_prepare(w, callable_id, args, n_args, scalars, n_scalars, err)) return rc;
  if (int32_t rc = taskring_launch(w, err)) return rc;
  (void)taskring_wait(w, nullptr);
  return taskring_finalize(w, report, err);
}

int32_t taskring_device_malloc(taskring_worker* w, uint64_t bytes, uint64_t* out_addr, taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    if (int32_t rc = need_worker(w, err, "taskring_device_malloc")) return rc;
    if (out_addr == nullptr) return fail(err, taskring::invalid_argument("taskring_device_malloc: null out_addr"));
    auto a = w->worker->device().malloc(bytes, 1024, "c_api");
    if (!a.ok()) return fail(err, a.status());
    *out_addr = *a;
    return ok(err);
  });
}

int32_t taskring_device_free(taskring_worker* w, uint64_t addr, taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    if (int32_t rc = need_worker(w, err, "taskring_device_free")) return rc;
    taskring::Status s = w->worker->device().free(addr);
    return s.ok() ? ok(err) : fail(err, s);
  });
}

int32_t taskring_copy_to_device(taskring_worker* w, uint64_t dst, const void* src, uint64_t bytes,
                                taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    if (int32_t rc = need_worker(w, err, "taskring_copy_to_device")) return rc;
    taskring::Status s = w->worker->device().copy_to_device(dst, src, bytes);
    return s.ok() ? ok(err) : fail(err, s);
  });
}

int32_t taskring_copy_from_device(taskring_worker* w, void* dst, uint64_t src, uint64_t bytes, taskring_error* err) {
  return guarded(err, [&]() -> int32_t {
    if (int32_t rc = need_worker(w, err, "taskring_copy_from_device")) return rc;
    taskring::Status s = w->worker->device().copy_from_device(dst, src, bytes);
    return s.ok() ? ok(err) : fail(err, s);
  });
}

}  // extern "C"
