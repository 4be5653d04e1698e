/* taskring C ABI: a ChipWorker for callers that are not C++ (Python ctypes,
 * other languages, a host runtime loaded with dlopen).
 *
 * Every function returns TASKRING_OK (0) or a taskring status code (the
 * StatusCode values of include/taskring/base/status.hpp) and, when `err` is
 * non-null, writes a message naming what was wrong into it. No C++ exception
 * crosses this boundary. Handles are not thread-safe: one thread drives one
 * worker at a time.
 */
#ifndef TASKRING_C_API_H_
#define TASKRING_C_API_H_

#include <stddef.h>
#include <stdint.h>

#include "taskring/kernels/kernel_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TASKRING_OK 0
#define TASKRING_ERROR_CAPACITY 512

typedef struct taskring_error {
  int32_t code;
  char message[TASKRING_ERROR_CAPACITY];
} taskring_error;

/* A ChipTensor descriptor (128 bytes, layout of include/taskring/tensor/
 * chip_tensor.hpp); build it with taskring_make_tensor. */
#ifdef __cplusplus
#define TASKRING_ALIGN64 alignas(64)
#else
#define TASKRING_ALIGN64 _Alignas(64)
#endif
typedef struct taskring_tensor {
  TASKRING_ALIGN64 uint8_t bytes[128];
} taskring_tensor;

/* Tensor argument tags (TensorArgType). */
enum {
  TASKRING_ARG_INPUT = 0,
  TASKRING_ARG_OUTPUT_EXISTING = 3,
  TASKRING_ARG_INOUT = 2,
  TASKRING_ARG_NO_DEP = 4,
};

typedef struct taskring_arg {
  const taskring_tensor* tensor;
  int32_t tag;
} taskring_arg;

typedef struct taskring_kernel_desc {
  int32_t func_id;
  taskring_kernel_fn fn; /* or NULL and */
  const char* library;   /* a shared library exporting kernel_entry */
} taskring_kernel_desc;

/* An orchestration: `entry` is `void(const ChipTaskArgs&)` as an opaque
 * function pointer (C++ side), or NULL and `library` (a shared library
 * exporting aicpu_orchestration_entry, built against
 * pto_orchestration_api.h). */
typedef struct taskring_callable_desc {
  const char* name;
  void* entry;
  void* config;
  const char* library;
  const taskring_kernel_desc* kernels;
  int32_t kernel_count;
} taskring_callable_desc;

typedef struct taskring_run_report {
  uint64_t tasks_submitted, tasks_completed, kernel_calls;
  uint64_t h2d_calls, h2d_bytes, d2h_calls, d2h_bytes;
  uint64_t bind_ns, run_ns, validate_ns;
  uint64_t orch_ns, sched_ns;
  uint64_t invocation_id;
  int32_t skipped_device_run;
} taskring_run_report;

typedef struct taskring_worker taskring_worker;

/* device: "sim" (NULL = "sim"); runtime: "tmr" (NULL = "tmr"). Knobs come
 * from the process environment. */
int32_t taskring_worker_create(const char* device, const char* runtime, taskring_worker** out, taskring_error* err);
void taskring_worker_destroy(taskring_worker* worker);

/* A contiguous tensor over `ptr` (host pointer, or device address when
 * `on_device`). dtype is a DataType value (0 = FP32). */
int32_t taskring_make_tensor(uint64_t ptr, const uint32_t* shapes, uint32_t ndims, int32_t dtype, int32_t on_device,
                             taskring_tensor* out, taskring_error* err);

int32_t taskring_register_callable(taskring_worker* worker, const taskring_callable_desc* desc, int32_t* out_id,
                                   taskring_error* err);

int32_t taskring_prepare(taskring_worker* worker, int32_t callable_id, const taskring_arg* args, int32_t n_args,
                         const uint64_t* scalars, int32_t n_scalars, taskring_error* err);
int32_t taskring_launch(taskring_worker* worker, taskring_error* err);
/* *done = 1 finished, 0 running. */
int32_t taskring_poll(taskring_worker* worker, int32_t* done, taskring_error* err);
int32_t taskring_wait(taskring_worker* worker, taskring_error* err);
int32_t taskring_finalize(taskring_worker* worker, taskring_run_report* report, taskring_error* err);
int32_t taskring_run(taskring_worker* worker, int32_t callable_id, const taskring_arg* args, int32_t n_args,
                     const uint64_t* scalars, int32_t n_scalars, taskring_run_report* report, taskring_error* err);

int32_t taskring_device_malloc(taskring_worker* worker, uint64_t bytes, uint64_t* out_addr, taskring_error* err);
int32_t taskring_device_free(taskring_worker* worker, uint64_t addr, taskring_error* err);
int32_t taskring_copy_to_device(taskring_worker* worker, uint64_t dst, const void* src, uint64_t bytes,
                                taskring_error* err);
int32_t taskring_copy_from_device(taskring_worker* worker, void* dst, uint64_t src, uint64_t bytes,
                                  taskring_error* err);

/* ---- The L3 node (include/taskring/node/node_worker.hpp) ----
 *
 * A node forks one child process per chip and per SUB worker in
 * taskring_node_init, which must run before the calling process starts any
 * thread. Host tensors passed to node tasks must lie in the node's shared
 * heap (taskring_node_alloc_shared). Typical use:
 *   create -> register_chip / register_sub -> init -> alloc_shared ->
 *   run (or submit + run_wait) ... -> close -> destroy. */
typedef struct taskring_node taskring_node;
typedef struct taskring_orch taskring_orch; /* valid only inside an orchestration callback */
typedef struct taskring_run_handle taskring_run_handle;

typedef struct taskring_node_config {
  int32_t chips;               /* 0..64 sim chip children */
  int32_t sub_workers;         /* 0..64 SUB children */
  const char* runtime;         /* "tmr" (NULL) or "hbg" */
  uint64_t heap_ring_bytes;    /* 0: default (64 MiB) */
  uint64_t shared_bytes;       /* 0: default (64 MiB) */
  uint64_t startup_timeout_ms; /* 0: default (30000) */
} taskring_node_config;

/* A SUB callable; runs in a SUB child. Returns TASKRING_OK or a status
 * code, with a message in `err`. `tensors[i]` carries tag `tags[i]`. */
typedef int32_t (*taskring_sub_fn)(const taskring_tensor* tensors, const int32_t* tags, int32_t n_tensors,
                                   const uint64_t* scalars, int32_t n_scalars, void* user, taskring_error* err);
/* An orchestration; its return value and `err` become the run's error. */
typedef int32_t (*taskring_orch_fn)(taskring_orch* orch, void* user, taskring_error* err);

int32_t taskring_node_create(const taskring_node_config* config, taskring_node** out, taskring_error* err);
/* Closes (if needed) and frees. NULL is ignored. */
void taskring_node_destroy(taskring_node* node);
int32_t taskring_node_register_chip(taskring_node* node, const taskring_callable_desc* desc, int32_t* out_id,
                                    taskring_error* err);
int32_t taskring_node_register_sub(taskring_node* node, const char* name, taskring_sub_fn fn, void* user,
                                   int32_t* out_id, taskring_error* err);
int32_t taskring_node_init(taskring_node* node, taskring_error* err);
int32_t taskring_node_alloc_shared(taskring_node* node, uint64_t bytes, void** out, taskring_error* err);
/* Runs `fn` now; the run's handle comes back in *out (release it). */
int32_t taskring_node_submit(taskring_node* node, taskring_orch_fn fn, void* user, taskring_run_handle** out,
                             taskring_error* err);
/* The run's status once it finished, DEADLINE_EXCEEDED after timeout_ms. */
int32_t taskring_node_run_wait(taskring_run_handle* run, uint64_t timeout_ms, taskring_error* err);
void taskring_node_run_release(taskring_run_handle* run);
/* submit + wait + release. */
int32_t taskring_node_run(taskring_node* node, taskring_orch_fn fn, void* user, uint64_t timeout_ms,
                          taskring_error* err);
int32_t taskring_node_close(taskring_node* node, taskring_error* err);

int32_t taskring_orch_submit_chip(taskring_orch* orch, int32_t callable_id, const taskring_arg* args, int32_t n_args,
                                  const uint64_t* scalars, int32_t n_scalars, int32_t chip, taskring_error* err);
int32_t taskring_orch_submit_sub(taskring_orch* orch, int32_t callable_id, const taskring_arg* args, int32_t n_args,
                                 const uint64_t* scalars, int32_t n_scalars, taskring_error* err);

#ifdef __cplusplus
}
#endif

#endif /* TASKRING_C_API_H_ */
