// Pieces the sanitizer's chip tests share: a worker with one callable, and
// the copy of a task's tagged arguments into a Graph boundary and back (the
// Graph cases run each task as a one-node Graph).
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "taskring/chip/chip_worker.hpp"
#include "taskring/chip/graph_api.hpp"

namespace taskring::sanitize_test {

// Creates a worker with `env` and registers one callable; fails the test
// (and returns an empty worker) on error.
inline std::unique_ptr<ChipWorker> make_worker(const std::string& runtime, EnvLookup env, ChipCallable c,
                                               int* callable) {
  ChipWorkerConfig cfg;
  cfg.runtime = runtime;
  cfg.env = std::move(env);
  auto w = ChipWorker::create(cfg);
  EXPECT_TRUE(w.ok()) << w.status().to_string();
  if (!w.ok()) return nullptr;
  auto id = (*w)->register_callable(c);
  EXPECT_TRUE(id.ok()) << id.status().to_string();
  *callable = id.ok() ? *id : -1;
  return std::move(*w);
}

// Every tensor of `from` with its tag, then every scalar, appended to `to`
// (CoreTaskArgs <-> GraphTaskArgs).
template <typename From, typename To>
void copy_tagged(const From& from, To* to) {
  for (int i = 0; i < from.tensor_count(); ++i) {
    switch (from.tag(i)) {
      case TensorArgType::INPUT: to->add_input(*from.tensor(i)); break;
      case TensorArgType::INOUT: to->add_inout(*from.tensor(i)); break;
      case TensorArgType::NO_DEP: to->add_no_dep(*from.tensor(i)); break;
      default: to->add_output(*from.tensor(i)); break;
    }
  }
  for (int i = 0; i < from.scalar_count(); ++i) to->add_scalar(from.scalar(i));
}

// The body of a one-task Graph: the boundary becomes the task's arguments.
inline void one_task_body(const GraphTaskArgs& g, int32_t kernel) {
  CoreTaskArgs t;
  copy_tagged(g, &t);
  rt_submit_aiv_task(kernel, t);
}

// Submits `t` on `kernel`, inside a one-task Graph when `graph`.
inline void submit(bool graph, int32_t kernel, const CoreTaskArgs& t) {
  if (!graph) {
    rt_submit_aiv_task(kernel, t);
    return;
  }
  GraphTaskArgs g;
  copy_tagged(t, &g);
  rt_submit_graph(GRAPH_KEY("one_task"), one_task_body, g, kernel);
}

// The run failed (else `missed`) with a message holding every one of `parts`.
inline void expect_failure_naming(const Status& s, std::initializer_list<std::string> parts, const char* missed) {
  ASSERT_FALSE(s.ok()) << missed;
  const std::string m = s.message();
  for (const std::string& p : parts) EXPECT_NE(m.find(p), std::string::npos) << "missing '" << p << "' in: " << m;
}

}  // namespace taskring::sanitize_test
