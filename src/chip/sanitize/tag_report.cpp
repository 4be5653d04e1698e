// The messages of the tag checker: which kernel touched which byte, named
// by the argument it belongs to (or lies nearest to) and that argument's tag.
#include <cstdio>
#include <cstdlib>

#include "arg_tag.hpp"
#include "tag_checker.hpp"
#include "taskring/device/sim_device.hpp"

namespace taskring::sanitize {

namespace {

std::string tag_text(const ChipTensor& t) {
  std::optional<TensorArgType> tag = stamped_tag(t);
  return tag ? std::string(tensor_arg_type_name(*tag)) : std::string("untagged");
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Distance from `dev` to the view [b, e); 0 inside.
uint64_t distance(uint64_t dev, uint64_t b, uint64_t e) { return dev < b ? b - dev : dev >= e ? dev - e + 1 : 0; }

}  // namespace

std::string kernel_label(const exec::LaunchTask& task, const std::vector<std::string>* names) {
  auto one = [&](int32_t fid) {
    std::string s;
    if (names != nullptr && fid >= 0 && static_cast<size_t>(fid) < names->size() && !(*names)[fid].empty()) {
      s = "'" + (*names)[fid] + "' ";
    }
    return s + "(id " + std::to_string(fid) + ")";
  };
  int active = 0, last = -1;
  for (int s = 0; s < 3; ++s) {
    if (task.kernels[s] >= 0) ++active, last = s;
  }
  if (active == 1) return "kernel " + one(task.kernels[last]);
  static const char* kSlot[3] = {"aic", "aiv0", "aiv1"};
  std::string s = "kernels{";
  for (int k = 0; k < 3; ++k) {
    if (task.kernels[k] < 0) continue;
    if (s.back() != '{') s += ", ";
    s += std::string(kSlot[k]) + "=" + one(task.kernels[k]);
  }
  return s + "}";
}

std::string TagChecker::describe(const exec::LaunchTask& task, const std::string& task_name, uintptr_t addr,
                                 int is_write) const {
  const uint64_t dev = kSimDeviceAddressBase + (addr - reinterpret_cast<uintptr_t>(arena_));
  const char* verb = is_write == 1 ? "wrote" : is_write == 0 ? "read" : "accessed";
  std::string head = task_name + " " + kernel_label(task, names_) + " " + verb + " ";
  const std::string tail = " [TASKRING_SANITIZE=tags]";
  int best = -1;
  uint64_t best_d = ~0ull;
  for (int i = 0; i < task.tensor_count; ++i) {
    const ChipTensor& t = task.tensors[i];
    const uint64_t b = t.data_addr(), e = b + t.extent_bytes();
    const uint64_t d = distance(dev, b, e);
    // Inside a view: the first such argument is the one named.
    if (d == 0) {
      return head + "byte " + std::to_string(dev - b) + " of argument " + std::to_string(i) + " (" + tag_text(t) +
             "), which the task may only read: a kernel may write only its OUTPUT, OUTPUT_EXISTING and INOUT "
             "arguments" +
             tail;
    }
    // Prefer an argument whose buffer holds the byte, then the nearest view.
    const bool in_buffer = dev >= t.buffer.addr && dev - t.buffer.addr < t.buffer.size;
    const uint64_t rank = in_buffer ? d : d + (1ull << 62);
    if (rank < best_d) best = i, best_d = rank;
  }
  if (best < 0) return head + "device address " + hex(dev) + ", and the task has no tensor arguments" + tail;
  const ChipTensor& t = task.tensors[best];
  const uint64_t b = t.data_addr(), e = b + t.extent_bytes();
  const bool in_buffer = dev >= t.buffer.addr && dev - t.buffer.addr < t.buffer.size;
  const long long off = static_cast<long long>(dev - b);
  std::string s = head + "byte " + std::to_string(off) + " relative to the view of argument " + std::to_string(best) +
                  " (" + tag_text(t) + "), " + (dev < b ? "before its start" : "past its end") + " (the view is " +
                  std::to_string(e - b) + " bytes)";
  if (!in_buffer) {
    s += ", outside that tensor's buffer at device address " + hex(dev) +
         ": no argument of the task covers it (a tensor the task was not passed?)";
  }
  return s + tail;
}

}  // namespace taskring::sanitize
