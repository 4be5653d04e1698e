// Status: the error value every public taskring API returns.
//
// A Status is either OK or a (code, message) pair. Messages name what was
// wrong and where ("PTO2_RING_HEAP=12: must be >= 1024"), so a caller can
// print them as they are. Status never throws and is cheap to move.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace taskring {

// Broad error classes. Runtime-specific codes (SCOPE_DEADLOCK, ...) live in
// the chip layer and map onto one of these plus a message.
enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,     // caller passed something malformed
  kOutOfRange = 2,          // index / view / copy outside its bounds
  kNotFound = 3,            // unknown id, missing symbol, missing file
  kAlreadyExists = 4,       // id registered twice
  kFailedPrecondition = 5,  // call made in the wrong state (use after free, ...)
  kResourceExhausted = 6,   // a ring, pool or arena is full
  kDeadlineExceeded = 7,    // a wait ran past its deadline
  kAborted = 8,             // a run was stopped by a latched fatal error
  kInternal = 9,            // an invariant of taskring itself broke
  kUnimplemented = 10,      // not supported (on this runtime / device)
  kUnavailable = 11,        // an OS resource could not be obtained
};

// Returns the upper-case name of `code`, e.g. "INVALID_ARGUMENT". Inline, like
// Status::to_string: header-only users (orchestration sources built without
// taskring's libraries) reach them through Expected::value().
inline std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  // An OK status.
  Status() = default;
  // A status with `code` and `message`. `code == kOk` ignores the message.
  Status(StatusCode code, std::string message)
      : code_(code), message_(code == StatusCode::kOk ? std::string() : std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "OK" or "<CODE_NAME>: <message>".
  std::string to_string() const;

  // Returns a copy whose message is "<context>: <message>"; OK stays OK.
  Status with_context(std::string_view context) const;

  friend bool operator==(const Status& a, const Status& b) { return a.code_ == b.code_ && a.message_ == b.message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kOutOfRange: return "OUT_OF_RANGE";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kAlreadyExists: return "ALREADY_EXISTS";
    case StatusCode::kFailedPrecondition: return "FAILED_PRECONDITION";
    case StatusCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case StatusCode::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case StatusCode::kAborted: return "ABORTED";
    case StatusCode::kInternal: return "INTERNAL";
    case StatusCode::kUnimplemented: return "UNIMPLEMENTED";
    case StatusCode::kUnavailable: return "UNAVAILABLE";
  }
  return "UNKNOWN";
}

inline std::string Status::to_string() const {
  if (ok()) return "OK";
  std::string out(status_code_name(code_));
  out += ": ";
  out += message_;
  return out;
}

inline Status invalid_argument(std::string m) { return Status(StatusCode::kInvalidArgument, std::move(m)); }
inline Status out_of_range(std::string m) { return Status(StatusCode::kOutOfRange, std::move(m)); }
inline Status not_found(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
inline Status failed_precondition(std::string m) { return Status(StatusCode::kFailedPrecondition, std::move(m)); }
inline Status resource_exhausted(std::string m) { return Status(StatusCode::kResourceExhausted, std::move(m)); }
inline Status deadline_exceeded(std::string m) { return Status(StatusCode::kDeadlineExceeded, std::move(m)); }
inline Status internal_error(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }
inline Status unimplemented(std::string m) { return Status(StatusCode::kUnimplemented, std::move(m)); }
inline Status unavailable(std::string m) { return Status(StatusCode::kUnavailable, std::move(m)); }
inline Status aborted(std::string m) { return Status(StatusCode::kAborted, std::move(m)); }

}  // namespace taskring

// Returns from the enclosing function when `expr` (a Status) is not OK.
#define TASKRING_RETURN_IF_ERROR(expr)       \
  do {                                       \
    ::taskring::Status _tr_status = (expr);  \
    if (!_tr_status.ok()) return _tr_status; \
  } while (0)
