#include "write_log.hpp"

#include <sched.h>

#include "arg_tag.hpp"
#include "tag_checker.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/base/waiter.hpp"

namespace taskring::sanitize {

namespace {

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

void WriteLog::begin_run(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
  seed_ = seed;
  streams_.store(0, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
}

void WriteLog::delay() {
  // One random stream per launching thread and run: the k-th thread to launch
  // in a run draws from (seed, k).
  thread_local uint64_t gen = 0, state = 0;
  const uint64_t g = generation_.load(std::memory_order_acquire);
  if (gen != g) {
    gen = g;
    state = seed_ * 0x2545f4914f6cdd1dull + streams_.fetch_add(1, std::memory_order_relaxed);
  }
  const uint64_t r = splitmix(state);
  if ((r & 1) == 0) return;
  const uint64_t end = mono_ns() + ((r >> 1) % kMaxDelayUs) * 1000;
  for (uint32_t i = 0; mono_ns() < end; ++i) {
    if ((i & 15) == 15)
      sched_yield();
    else
      Waiter::cpu_relax();
  }
}

void WriteLog::after_launch(const exec::LaunchTask& task, const std::string& task_name,
                            const std::vector<std::string>* names) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 0; i < task.tensor_count; ++i) {
      const ChipTensor& t = task.tensors[i];
      std::optional<TensorArgType> tag = stamped_tag(t);
      if (!tag || !(tag_writes(*tag) || *tag == TensorArgType::NO_DEP) || t.extent_bytes() == 0) continue;
      std::string who = task_name + " (" + kernel_label(task, names) + ", argument " + std::to_string(i) + " " +
                        std::string(tensor_arg_type_name(*tag)) + ")";
      entries_.push_back(Entry{t.data_addr(), t.data_addr() + t.extent_bytes(), std::move(who)});
    }
  }
}

std::optional<std::string> WriteLog::last_writer(uint64_t addr) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (addr >= it->begin && addr < it->end) return it->who;
  }
  return std::nullopt;
}

}  // namespace taskring::sanitize
