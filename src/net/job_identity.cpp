#include "job_identity.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <map>

namespace taskring::net {

void JobIdentity::write(Writer& w) const {
  w.str(build).put(chips).put(subs).str(runtime).put(ranks);
  w.put(static_cast<uint32_t>(fields.size()));
  for (const auto& [k, v] : fields) w.str(k).str(v);
}

void JobIdentity::read(Reader& r) {
  build = r.str();
  chips = r.get<uint32_t>();
  subs = r.get<uint32_t>();
  runtime = r.str();
  ranks = r.get<uint32_t>();
  const uint32_t n = r.get<uint32_t>();
  fields.clear();
  for (uint32_t i = 0; i < n && i < 4096 && r.ok(); ++i) {
    std::string k = r.str();
    std::string v = r.str();
    fields.emplace_back(std::move(k), std::move(v));
  }
}

namespace {

std::string hash_file(const char* path) {
  FILE* f = std::fopen(path, "rb");
  if (f == nullptr) return std::string("unreadable:") + path;
  uint64_t h = 1469598103934665603ull, bytes = 0;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
    for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(buf[i])) * 1099511628211ull;
    bytes += n;
  }
  std::fclose(f);
  char out[64];
  std::snprintf(out, sizeof(out), "%016llx:%llu", static_cast<unsigned long long>(h),
                static_cast<unsigned long long>(bytes));
  return out;
}

}  // namespace

const std::string& this_build_id() {
  // The object that holds this function: the executable, or the Python
  // extension module that linked the L4 code in.
  static const std::string id = [] {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&this_build_id), &info) != 0 && info.dli_fname != nullptr &&
        info.dli_fname[0] == '/')
      return hash_file(info.dli_fname);
    return hash_file("/proc/self/exe");
  }();
  return id;
}

std::string job_mismatch(const JobIdentity& mine, const JobIdentity& theirs, int world) {
  auto differs = [](const std::string& field, const std::string& a, const std::string& b) {
    return field + " is '" + a + "', rank 0 has '" + b + "'";
  };
  if (theirs.ranks != 0 && theirs.ranks != static_cast<uint32_t>(world))
    return "--nodes " + std::to_string(theirs.ranks) + " but mpirun started " + std::to_string(world) + " ranks";
  if (theirs.build != mine.build)
    return differs("build", theirs.build, mine.build) + " (run one taskring build on every rank)";
  // In rank 0's order (the caller puts what matters most first, e.g. the
  // workload before its parameters), by name, so a field one side lacks is
  // named too.
  std::map<std::string, std::string> b(theirs.fields.begin(), theirs.fields.end());
  for (const auto& [k, v] : mine.fields) {
    auto it = b.find(k);
    if (it == b.end()) return k + " is not set, rank 0 has '" + v + "'";
    if (it->second != v) return differs(k, it->second, v);
    b.erase(it);
  }
  if (!b.empty()) return b.begin()->first + " is '" + b.begin()->second + "', not set on rank 0";
  if (theirs.chips != mine.chips) return differs("chips", std::to_string(theirs.chips), std::to_string(mine.chips));
  if (theirs.subs != mine.subs) return differs("sub_workers", std::to_string(theirs.subs), std::to_string(mine.subs));
  if (theirs.runtime != mine.runtime) return differs("runtime", theirs.runtime, mine.runtime);
  if (theirs.ranks != mine.ranks) return differs("nodes", std::to_string(theirs.ranks), std::to_string(mine.ranks));
  return "";
}

}  // namespace taskring::net
