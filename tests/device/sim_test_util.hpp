// Helpers shared by the sim device tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "taskring/device/sim_device.hpp"

namespace taskring::testing {

// A small sim device (64 MiB arena) so ASan runs stay light.
inline std::unique_ptr<Device> make_sim(LinkModel link = {}, uint64_t arena_mb = 64) {
  SimDeviceConfig cfg;
  cfg.arena_bytes = arena_mb << 20;
  cfg.link = link;
  auto d = create_sim_device(cfg);
  EXPECT_TRUE(d.ok()) << d.status().to_string();
  return d.ok() ? std::move(d).value() : nullptr;
}

}  // namespace taskring::testing
