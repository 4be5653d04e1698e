// Status -> Python exception. The exception classes live in the pure-Python
// module `taskring.errors` (one class per StatusCode, each carrying `code`,
// `code_name`, `runtime_code` and `message`); this side only builds the
// arguments and raises.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "taskring/base/status.hpp"

namespace taskring::py {

// Raises the taskring.errors class of `s.code()` with `s.message()`; also
// finds the L2 runtime code ("KERNEL_FAILED", ...) named in the message.
// Precondition: !s.ok(). Holds the GIL.
[[noreturn]] void throw_status(const Status& s);

[[noreturn]] inline void throw_error(StatusCode code, std::string message) {
  throw_status(Status(code, std::move(message)));
}

// The L2 runtime error name ("SCOPE_DEADLOCK", ...) a message carries as
// "<NAME>: ", or empty.
std::string runtime_code_in(const std::string& message);

void bind_errors(pybind11::module_& m);

}  // namespace taskring::py
