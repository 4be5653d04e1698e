// What the chip and node C ABIs (include/taskring/c_api.h) share: turning a
// Status into the C error record, keeping exceptions from crossing the C
// boundary, and converting a C argument array into ChipTaskArgs.
#pragma once

#include <cstdio>
#include <exception>
#include <string>

#include "taskring/base/status.hpp"
#include "taskring/c_api.h"
#include "taskring/chip/chip_worker.hpp"

namespace taskring::c_abi {

// Writes `s` into `err` (when non-null) and returns its code.
inline int32_t fail(taskring_error* err, const Status& s) {
  if (err != nullptr) {
    err->code = static_cast<int32_t>(s.code());
    std::snprintf(err->message, sizeof(err->message), "%s", s.to_string().c_str());
  }
  return static_cast<int32_t>(s.code());
}

// Clears `err` (when non-null) and returns TASKRING_OK.
inline int32_t ok(taskring_error* err) {
  if (err != nullptr) {
    err->code = 0;
    err->message[0] = '\0';
  }
  return TASKRING_OK;
}

inline int32_t from(taskring_error* err, const Status& s) { return s.ok() ? ok(err) : fail(err, s); }

// Runs `body`, mapping an escaping exception (allocation failure, a bug) to
// INTERNAL instead of letting it cross the C boundary.
template <typename Body>
int32_t guarded(taskring_error* err, Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return fail(err, internal_error(std::string("exception at the C ABI: ") + e.what()));
  } catch (...) {
    return fail(err, internal_error("unknown exception at the C ABI"));
  }
}

// Appends `n` tagged tensor arguments and `ns` scalars to `out`. Errors are
// INVALID_ARGUMENT prefixed with `fn` (the C entry point's name) and name the
// argument index and what was wrong with it.
inline Status build_args(const char* fn, const taskring_arg* args, int32_t n, const uint64_t* scalars, int32_t ns,
                         ChipTaskArgs* out) {
  if (n < 0 || ns < 0 || (n > 0 && args == nullptr) || (ns > 0 && scalars == nullptr))
    return invalid_argument(std::string(fn) + ": bad argument or scalar array");
  for (int32_t i = 0; i < n; ++i) {
    if (args[i].tensor == nullptr)
      return invalid_argument(std::string(fn) + ": argument " + std::to_string(i) + " has no tensor");
    const auto* t = reinterpret_cast<const ChipTensor*>(args[i].tensor);
    const int32_t tag = args[i].tag;
    if (tag != TASKRING_ARG_INPUT && tag != TASKRING_ARG_INOUT && tag != TASKRING_ARG_OUTPUT_EXISTING &&
        tag != TASKRING_ARG_NO_DEP)
      return invalid_argument(std::string(fn) + ": argument " + std::to_string(i) + " has tag " + std::to_string(tag) +
                              " (expected INPUT 0, INOUT 2, OUTPUT_EXISTING 3 or NO_DEP 4)");
    out->add_tensor(*t, static_cast<TensorArgType>(tag));
  }
  out->add_scalars(scalars, ns);
  if (out->has_error()) return invalid_argument(std::string(fn) + ": " + out->error_msg());
  return Status::Ok();
}

}  // namespace taskring::c_abi
