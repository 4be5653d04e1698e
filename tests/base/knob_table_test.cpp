// The knob table is the one definition of every knob: readers take their
// bounds from it, and docs/knobs.md carries exactly its generated tables.
#include "taskring/base/knob_table.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#ifndef TASKRING_DOCS_KNOBS_MD
#error "TASKRING_DOCS_KNOBS_MD must name docs/knobs.md"
#endif

namespace taskring {
namespace {

TEST(KnobTable, NamesAreUniqueAndDocumented) {
  std::set<std::string_view> names;
  for (const KnobSpec& k : knob_table()) {
    EXPECT_TRUE(names.insert(k.name).second) << k.name << " listed twice";
    EXPECT_FALSE(k.section.empty()) << k.name;
    EXPECT_FALSE(k.default_doc.empty()) << k.name;
    EXPECT_FALSE(k.help.empty()) << k.name;
    if (k.kind == KnobKind::kInt || k.kind == KnobKind::kIntList) EXPECT_LE(k.min, k.max) << k.name;
  }
  EXPECT_GE(names.size(), 15u);
}

TEST(KnobTable, DocsMatchTheTable) {
  std::ifstream f(TASKRING_DOCS_KNOBS_MD);
  ASSERT_TRUE(f.good()) << TASKRING_DOCS_KNOBS_MD;
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string doc = ss.str();
  const std::string begin = "<!-- knob-table:begin";
  const std::string end = "<!-- knob-table:end -->";
  size_t b = doc.find(begin);
  ASSERT_NE(b, std::string::npos) << "docs/knobs.md lost its knob-table:begin marker";
  b = doc.find("-->\n", b);
  ASSERT_NE(b, std::string::npos);
  b += 4;
  size_t e = doc.find(end, b);
  ASSERT_NE(e, std::string::npos) << "docs/knobs.md lost its knob-table:end marker";
  EXPECT_EQ(doc.substr(b, e - b), knob_table_markdown())
      << "docs/knobs.md is out of date: regenerate the block with `taskring info --knobs-markdown`";
}

TEST(KnobTable, IntReadersTakeTheTableBounds) {
  for (const KnobSpec& k : knob_table()) {
    if (k.kind != KnobKind::kInt) continue;
    std::string name(k.name);
    auto above = read_int_knob(map_env({{name, std::to_string(k.max + 1)}}), k);
    ASSERT_FALSE(above.ok()) << name;
    EXPECT_NE(above.status().message().find(name), std::string::npos) << above.status().to_string();
    EXPECT_NE(above.status().message().find(std::to_string(k.max)), std::string::npos) << above.status().to_string();
    auto at_min = read_int_knob(map_env({{name, std::to_string(k.min)}}), k);
    ASSERT_TRUE(at_min.ok()) << at_min.status().to_string();
    EXPECT_EQ(at_min->value_or(-1), k.min);
    auto unset = read_int_knob(map_env({}), k);
    ASSERT_TRUE(unset.ok());
    EXPECT_FALSE(unset->has_value());
  }
}

TEST(KnobTable, BoolKnobsAcceptTheirAlias) {
  const KnobSpec& k = knob("TASKRING_SKIP_DEVICE_RUN");
  std::string used;
  auto v = read_bool_knob(map_env({{std::string(k.alias), "yes"}}), k, &used);
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  EXPECT_EQ(v->value_or(false), true);
  EXPECT_EQ(used, k.alias);
}

}  // namespace
}  // namespace taskring
