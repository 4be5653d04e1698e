#include "device_profile.hpp"

#include <algorithm>

#include "run_spans.hpp"
#include "taskring/base/clock.hpp"
#include "taskring/log/strace.hpp"

namespace taskring::exec {

DeviceProfile::DeviceProfile(int executors) : lanes_(static_cast<size_t>(std::max(executors, 1))) {
  for (Lane& l : lanes_) l.records.reserve(4096);
}

uint64_t DeviceProfile::mono() { return mono_ns(); }

void DeviceProfile::clear() {
  for (Lane& l : lanes_) l.records.clear();
  anchor_ticks_ = now();
  anchor_ns_ = mono_ns();
}

size_t DeviceProfile::size() const {
  size_t n = 0;
  for (const Lane& l : lanes_) n += l.records.size();
  return n;
}

std::vector<DeviceTaskRecord> DeviceProfile::sorted() const {
  std::vector<DeviceTaskRecord> all;
  all.reserve(size());
  for (const Lane& l : lanes_) all.insert(all.end(), l.records.begin(), l.records.end());
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  // Ticks to ns through two anchors: clear() and now (a run is at least
  // microseconds long, so the slope is well defined).
  const uint64_t t1 = now(), n1 = mono_ns();
  const double ns_per_tick =
      t1 > anchor_ticks_ ? static_cast<double>(n1 - anchor_ns_) / static_cast<double>(t1 - anchor_ticks_) : 1.0;
  auto to_ns = [&](uint64_t ticks) {
    const double d = static_cast<double>(static_cast<int64_t>(ticks - anchor_ticks_)) * ns_per_tick;
    return anchor_ns_ + static_cast<uint64_t>(std::max(d, 0.0));
  };
  for (DeviceTaskRecord& r : all) {
    r.start = to_ns(r.start);
    r.end = to_ns(r.end);
  }
  return all;
}

void emit_device_profile(std::string_view callable, uint64_t inv, const DeviceProfile& profile, int rank) {
  if (!log::strace::enabled()) return;
  const uint64_t hid = callable_hash(callable);
  for (const DeviceTaskRecord& r : profile.sorted()) {
    log::strace::Attrs a{{"core", static_cast<int64_t>(r.core)},       {"core_type", r.aic ? "aic" : "aiv"},
                         {"cluster", static_cast<int64_t>(r.cluster)}, {"block", static_cast<int64_t>(r.block)},
                         {"kernel", static_cast<int64_t>(r.kernel)},   {"task", r.task}};
    if (rank >= 0) a.add({"rank", static_cast<int64_t>(rank)});
    log::strace::emit_span(kCoreTaskSpan, static_cast<int64_t>(r.start),
                           static_cast<int64_t>(r.end > r.start ? r.end - r.start : 0), inv, hid, 2, a);
  }
  log::strace::flush_strace();
}

}  // namespace taskring::exec
