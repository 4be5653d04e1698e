// ParamSet, compare_to_reference and the catalog.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "taskring/workloads/catalog.hpp"
#include "taskring/workloads/golden.hpp"
#include "taskring/workloads/params.hpp"

namespace taskring::workloads {
namespace {

TEST(ParamSet, SetGetAndErrors) {
  ParamSet p;
  p.add("tile", 64, 1, 512, "tile edge").add("seed", 1, 0, 100, "seed");
  EXPECT_EQ(p.get("tile"), 64);
  EXPECT_TRUE(p.set("tile", 128).ok());
  EXPECT_EQ(p.get("tile"), 128);
  Status range = p.set("tile", 0);
  EXPECT_EQ(range.code(), StatusCode::kOutOfRange);
  EXPECT_NE(range.message().find("tile=0: expected an integer in [1, 512]"), std::string::npos) << range.message();
  Status unknown = p.set("tiles", 3);
  EXPECT_EQ(unknown.code(), StatusCode::kNotFound);
  EXPECT_NE(unknown.message().find("known: tile, seed"), std::string::npos) << unknown.message();
  EXPECT_EQ(p.set_from_string("seed", "7x").code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(p.set_from_string("seed", "7").ok());
  EXPECT_EQ(p.describe(), "tile=128 seed=7");
}

TEST(Golden, WithinTolerancePasses) {
  std::vector<float> got = {1.0f, 2.001f, -3.0f};
  std::vector<double> want = {1.0, 2.0, -3.0};
  GoldenStats s;
  EXPECT_TRUE(compare_to_reference("x", got, want, Tolerance{0.0, 1e-3}, &s).ok());
  EXPECT_EQ(s.checked, 3u);
  EXPECT_EQ(s.mismatches, 0u);
  EXPECT_NEAR(s.max_abs_err, 0.001, 1e-6);
}

TEST(Golden, ReportsMaxErrorsAndTolerance) {
  std::vector<float> got = {1.0f, 2.5f, NAN, 4.0f};
  std::vector<double> want = {1.0, 2.0, 3.0, 4.0};
  GoldenStats s;
  Status st = compare_to_reference("out", got, want, Tolerance{0.1, 0.0}, &s);
  ASSERT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.mismatches, 2u);  // 2.5 vs 2 and the NaN
  EXPECT_EQ(s.worst_index, 2u);
  EXPECT_NE(st.message().find("out: 2 of 4 elements outside tolerance (atol 0.1, rtol 0)"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("max abs error inf"), std::string::npos) << st.message();
}

TEST(Golden, SizeMismatchIsAnError) {
  std::vector<float> got(3);
  std::vector<double> want(4);
  EXPECT_EQ(compare_to_reference("x", got, want, {}).code(), StatusCode::kInvalidArgument);
}

TEST(Catalog, KnowsEveryWorkloadByName) {
  for (const CatalogEntry& e : catalog()) {
    auto w = make_workload(e.name);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ((*w)->name(), e.name);
    EXPECT_FALSE((*w)->summary().empty());
  }
  auto missing = make_workload("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("vector, bgemm, paged_attention"), std::string::npos);
}

}  // namespace
}  // namespace taskring::workloads
