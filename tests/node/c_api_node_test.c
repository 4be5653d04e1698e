/* The node C ABI, driven from C: a node with one SUB worker doubles a
 * shared buffer; bad calls return errors that name the problem. Exit 0 on
 * success; prints what failed otherwise. */
#include <stdio.h>
#include <string.h>

#include "taskring/c_api.h"

#define CHECK(cond, what)                    \
  do {                                       \
    if (!(cond)) {                           \
      fprintf(stderr, "FAILED: %s\n", what); \
      return 1;                              \
    }                                        \
  } while (0)

static int32_t double_it(const taskring_tensor* tensors, const int32_t* tags, int32_t n, const uint64_t* scalars,
                         int32_t ns, void* user, taskring_error* err) {
  (void)tags;
  (void)user;
  (void)tensors;
  if (n != 0 || ns != 2) {
    snprintf(err->message, sizeof(err->message), "double_it: want 0 tensors and 2 scalars");
    return 1;
  }
  float* p = (float*)(uintptr_t)scalars[0];
  for (uint64_t i = 0; i < scalars[1]; ++i) p[i] *= 2.0f;
  return 0;
}

struct orch_ctx {
  int32_t sub;
  float* data;
  uint64_t n;
};

static int32_t orch(taskring_orch* o, void* user, taskring_error* err) {
  struct orch_ctx* c = (struct orch_ctx*)user;
  uint64_t s[2] = {(uint64_t)(uintptr_t)c->data, c->n};
  return taskring_orch_submit_sub(o, c->sub, NULL, 0, s, 2, err);
}

static int32_t failing_orch(taskring_orch* o, void* user, taskring_error* err) {
  (void)o;
  (void)user;
  snprintf(err->message, sizeof(err->message), "orchestration says no");
  return 1;
}

int main(void) {
  taskring_error err;
  taskring_node* node = NULL;
  CHECK(taskring_node_create(NULL, &node, &err) != TASKRING_OK, "create(NULL config) fails");
  CHECK(strstr(err.message, "null config") != NULL, "the error names the null config");
  taskring_node_config cfg;
  memset(&cfg, 0, sizeof(cfg));
  cfg.sub_workers = 1;
  cfg.heap_ring_bytes = 1 << 16;
  cfg.shared_bytes = 1 << 16;
  CHECK(taskring_node_create(&cfg, &node, &err) == TASKRING_OK, err.message);
  int32_t sub = -1;
  CHECK(taskring_node_register_sub(node, "double", double_it, NULL, &sub, &err) == TASKRING_OK, err.message);
  CHECK(taskring_node_init(node, &err) == TASKRING_OK, err.message);
  void* mem = NULL;
  CHECK(taskring_node_alloc_shared(node, 64 * sizeof(float), &mem, &err) == TASKRING_OK, err.message);
  float* data = (float*)mem;
  for (int i = 0; i < 64; ++i) data[i] = (float)i;
  struct orch_ctx ctx = {sub, data, 64};
  CHECK(taskring_node_run(node, orch, &ctx, 30000, &err) == TASKRING_OK, err.message);
  for (int i = 0; i < 64; ++i) CHECK(data[i] == 2.0f * (float)i, "SUB doubled the shared buffer");
  CHECK(taskring_node_run(node, failing_orch, NULL, 30000, &err) != TASKRING_OK, "a failing orchestration fails");
  CHECK(strstr(err.message, "orchestration says no") != NULL, "its message comes back");
  CHECK(taskring_node_run(node, orch, &ctx, 30000, &err) == TASKRING_OK, "the node is usable afterwards");
  CHECK(taskring_node_close(node, &err) == TASKRING_OK, err.message);
  CHECK(taskring_node_close(node, &err) == TASKRING_OK, "close twice");
  taskring_node_destroy(node);
  CHECK(taskring_node_init(NULL, &err) != TASKRING_OK, "init(NULL) fails");
  printf("c_api_node_test: OK\n");
  return 0;
}
