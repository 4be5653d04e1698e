#include "orchestration_log.hpp"

#include "taskring/log/logger.hpp"

namespace taskring::l2 {

void orchestration_log(PTO2LogLevel level, const char* func, const char* message) {
  log::Level l = level == PTO2LogLevel::DEBUG  ? log::Level::kDebug
                 : level == PTO2LogLevel::INFO ? log::Level::kInfo
                 : level == PTO2LogLevel::WARN ? log::Level::kWarn
                                               : log::Level::kError;
  if (!log::enabled(l)) return;
  log::logf(l, func != nullptr ? func : "orchestration", "%s", message != nullptr ? message : "");
}

}  // namespace taskring::l2
