// FatalLatch: the first fatal error of a run, with its code and message.
//
// Any thread may report; only the first report of a run is kept (later ones
// are consequences). Readers poll `is_set()` on hot paths (one acquire load);
// the message is read only at wait/finalize, under the lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "taskring/base/status.hpp"

namespace taskring::l2 {

class FatalLatch {
 public:
  // Latches (`code`, `message`) unless a fatal error is already latched;
  // returns true when this report was the first.
  bool report(int32_t code, const std::string& message);
  bool is_set() const { return code_.load(std::memory_order_acquire) != 0; }
  // OK, or the latched error as "<PTO2 error name>: <message>".
  Status status() const;
  // Forgets the latched error (start of a run; no reporter may be running).
  void reset();

 private:
  std::atomic<int32_t> code_{0};
  mutable std::mutex mu_;
  std::string message_;  // guarded by mu_
};

}  // namespace taskring::l2
