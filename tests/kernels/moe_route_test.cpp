// moe_route against a host reference, and its composition with gather_rows /
// scatter_add_rows (the local MoE dispatch + combine of workloads/dsv4).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernel_test_util.hpp"

namespace taskring::kernels {
namespace {

using ::testing::HasSubstr;
using testing::HostTensor;
using testing::run;
namespace id = builtin_id;

// Routes T tokens (top-k of E experts from random logits) to the experts
// [base, base + local); checks every slot against a reference walk.
void check_route(int tokens, int experts, int topk, int base, int local) {
  HostTensor lg({static_cast<uint32_t>(tokens), static_cast<uint32_t>(experts)}, DataType::FP32);
  HostTensor ids({static_cast<uint32_t>(tokens), static_cast<uint32_t>(topk)}, DataType::INT32);
  HostTensor w({static_cast<uint32_t>(tokens), static_cast<uint32_t>(topk)}, DataType::FP32);
  HostTensor rows({static_cast<uint32_t>(local), static_cast<uint32_t>(tokens)}, DataType::INT32);
  HostTensor gates({static_cast<uint32_t>(local), static_cast<uint32_t>(tokens)}, DataType::FP32);
  HostTensor counts({static_cast<uint32_t>(local)}, DataType::INT32);
  lg.fill_random(static_cast<uint32_t>(tokens * 31 + experts));
  ASSERT_TRUE(run(id::kTopkGating, {lg.t(), ids.t(), w.t()}).ok());
  rows.fill(77);  // stale contents must be overwritten
  gates.fill(5.0);
  Status s = run(id::kMoeRoute, {ids.t(), w.t(), rows.t(), gates.t(), counts.t()}, {static_cast<uint64_t>(base)});
  ASSERT_TRUE(s.ok()) << s.to_string();
  for (int e = 0; e < local; ++e) {
    int slot = 0;
    for (int t = 0; t < tokens; ++t)
      for (int j = 0; j < topk; ++j)
        if (ids.at(t, j) == base + e) {
          EXPECT_EQ(rows.at(e, slot), t) << "expert " << e << " slot " << slot;
          EXPECT_EQ(gates.at(e, slot), w.at(t, j)) << "expert " << e << " slot " << slot;
          ++slot;
        }
    EXPECT_EQ(counts.get(e), slot) << "expert " << e;
    for (; slot < tokens; ++slot) {
      EXPECT_EQ(rows.at(e, slot), 0);
      EXPECT_EQ(gates.at(e, slot), 0.0);
    }
  }
}

TEST(BuiltinMoeRoute, MatchesReference) {
  check_route(4, 8, 2, 0, 8);
  check_route(13, 16, 4, 8, 8);  // the second of two chips
  check_route(7, 6, 6, 2, 3);    // every token picks every expert
}

// route → gather → identity "expert" → weighted scatter equals Σ_j w_j · x_t
// over the local experts a token chose.
TEST(BuiltinMoeRoute, DispatchCombineRoundTrip) {
  const int T = 6, E = 4, K = 2, D = 5;
  HostTensor lg({T, E}, DataType::FP32), ids({T, K}, DataType::INT32), w({T, K}, DataType::FP32);
  HostTensor rows({E, T}, DataType::INT32), gates({E, T}, DataType::FP32);
  HostTensor x({T, D}, DataType::FP32), buf({T, D}, DataType::FP32), acc({T, D}, DataType::FP32);
  lg.fill_random(4);
  x.fill_random(5);
  ASSERT_TRUE(run(id::kTopkGating, {lg.t(), ids.t(), w.t()}).ok());
  ASSERT_TRUE(run(id::kMoeRoute, {ids.t(), w.t(), rows.t(), gates.t()}).ok());
  for (int e = 0; e < E; ++e) {
    const ChipTensor r = rows.t().view({1, T}, {static_cast<uint32_t>(e), 0}).reshape({T});
    const ChipTensor g = gates.t().view({1, T}, {static_cast<uint32_t>(e), 0}).reshape({T});
    ASSERT_TRUE(run(id::kGatherRows, {x.t(), r, buf.t()}).ok());
    ASSERT_TRUE(run(id::kScatterAddRows, {buf.t(), r, acc.t(), g}).ok());
  }
  for (int t = 0; t < T; ++t)
    for (int c = 0; c < D; ++c) {
      const double want = (w.at(t, 0) + w.at(t, 1)) * x.at(t, c);
      EXPECT_NEAR(acc.at(t, c), want, 2e-6) << t << "," << c;
    }
}

TEST(BuiltinMoeRoute, BadInputs) {
  HostTensor ids({3, 2}, DataType::INT32), w({3, 2}, DataType::FP32), rows({2, 3}, DataType::INT32),
      gates({2, 3}, DataType::FP32), small({2, 1}, DataType::INT32), smallg({2, 1}, DataType::FP32),
      wf({3, 2}, DataType::INT32), counts3({3}, DataType::INT32);
  const int v[6] = {0, 1, 1, 0, 0, 1};
  for (int i = 0; i < 6; ++i) ids.set(i, v[i]);
  EXPECT_THAT(run(id::kMoeRoute, {ids.t(), wf.t(), rows.t(), gates.t()}).message(), HasSubstr("topk_weights dtype"));
  EXPECT_THAT(run(id::kMoeRoute, {ids.t(), w.t(), small.t(), smallg.t()}).message(), HasSubstr("more than capacity 1"));
  EXPECT_THAT(run(id::kMoeRoute, {ids.t(), w.t(), rows.t(), gates.t(), counts3.t()}).message(),
              HasSubstr("expected a vector of 2"));
  EXPECT_THAT(run(id::kMoeRoute, {ids.t(), w.t(), rows.t(), small.t()}).message(), HasSubstr("moe_route"));
  ids.set(3, -4);
  rows.fill(9);
  EXPECT_THAT(run(id::kMoeRoute, {ids.t(), w.t(), rows.t(), gates.t()}).message(), HasSubstr("is negative"));
  EXPECT_EQ(rows.at(0, 0), 9);  // nothing written on a rejected call
}

}  // namespace
}  // namespace taskring::kernels
