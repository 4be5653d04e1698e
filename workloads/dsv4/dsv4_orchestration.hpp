// The dsv4 chip callable (argument layout: dsv4_args.hpp).
#pragma once

#include "taskring/chip/chip_worker.hpp"

namespace taskring::workloads::dsv4 {

// One registration serves every chip, every run and both forms (Graph on and
// off): everything it needs arrives as entry arguments.
ChipCallable dsv4_callable();

}  // namespace taskring::workloads::dsv4
