// What defines an L4 job, carried in every rank's HELLO and compared by
// rank 0 at startup (NetWorker::init, docs/l4.md "Startup handshake"):
// ranks that would run different things (another workload, other
// parameters, another chip count, another build) must not start.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "wire.hpp"

namespace taskring::net {

struct JobIdentity {
  // The build: the size and a 64-bit FNV-1a hash of the binary (executable
  // or shared object) holding the L4 code, as "<hex>:<bytes>".
  std::string build;
  uint32_t chips = 0, subs = 0;
  std::string runtime;  // the chips' L2 runtime as configured
  uint32_t ranks = 0;   // the number of ranks this rank expects; 0: any
  // The caller's own fields (NetConfig::job), in its order.
  std::vector<std::pair<std::string, std::string>> fields;

  void write(Writer& w) const;
  // Fills *this from `r`; r.ok() tells whether it was well formed.
  void read(Reader& r);
};

// This process's build id (computed once; see JobIdentity::build).
const std::string& this_build_id();

// The first field in which `theirs` (rank `rank`) differs from rank 0's
// `mine`, as "<field> is '<theirs>', rank 0 has '<mine>'"; empty when they
// agree. `world` is the number of ranks mpirun started (checked against
// each rank's expected count).
std::string job_mismatch(const JobIdentity& mine, const JobIdentity& theirs, int world);

}  // namespace taskring::net
