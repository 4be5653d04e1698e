#include "trace.hpp"

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "errors.hpp"
#include "taskring/trace/invocations.hpp"
#include "taskring/trace/matrix.hpp"
#include "taskring/trace/parser.hpp"
#include "taskring/trace/report.hpp"

namespace taskring::py {

namespace pyb = pybind11;

namespace {

struct Analysis {
  trace::Trace trace;
  trace::StageNames names;
  std::vector<trace::Invocation> invocations;
  trace::Matrix matrix;
};

pyb::object opt(const std::optional<double>& v) { return v ? pyb::object(pyb::float_(*v)) : pyb::object(pyb::none()); }

pyb::dict summary(const trace::Summary& s) {
  pyb::dict d;
  d["n"] = s.n;
  d["min"] = s.min;
  d["median"] = s.median;
  d["mean"] = s.mean;
  d["max"] = s.max;
  d["stdev"] = s.stdev;
  d["trimmed_mean"] = s.has_trimmed ? pyb::object(pyb::float_(s.trimmed_mean)) : pyb::object(pyb::none());
  d["trimmed_each_side"] = s.trimmed_each_side;
  return d;
}

pyb::dict matrix_dict(const trace::Matrix& m) {
  pyb::dict d;
  d["ranks"] = m.ranks;
  d["rounds"] = m.rounds;
  d["warmup"] = m.warmup;
  d["dispatches_per_round"] = m.dispatches_per_round;
  d["rank_source"] = m.rank_source;
  pyb::list ranks;
  for (const auto& r : m.rank_info) {
    pyb::dict x;
    x["rank"] = r.rank;
    x["pids"] = r.pids;
    x["dispatches"] = r.dispatches;
    ranks.append(x);
  }
  d["rank_info"] = ranks;
  pyb::list cells;
  for (const auto& c : m.cells) {
    pyb::dict x;
    x["rank"] = c.rank;
    x["round"] = c.round;
    x["valid"] = c.valid;
    x["missing"] = c.missing;
    x["effective_us"] = c.valid ? pyb::object(pyb::float_(c.effective_us)) : pyb::object(pyb::none());
    x["host_us"] = c.valid ? pyb::object(pyb::float_(c.host_us)) : pyb::object(pyb::none());
    x["device_us"] = c.valid ? opt(c.device_us) : pyb::object(pyb::none());
    x["orch_us"] = c.valid ? pyb::object(pyb::float_(c.orch_us)) : pyb::object(pyb::none());
    x["sched_us"] = c.valid ? pyb::object(pyb::float_(c.sched_us)) : pyb::object(pyb::none());
    cells.append(x);
  }
  d["cells"] = cells;
  d["valid_cells"] = m.valid_cells;
  d["problems"] = m.problems;
  d["warnings"] = m.warnings;
  d["discarded_dispatches"] = m.discarded_dispatches;
  d["allow_discarded"] = m.allow_discarded;
  d["cell_stats"] = summary(m.cell_stats);
  pyb::list rs;
  for (const auto& s : m.rank_stats) rs.append(summary(s));
  d["rank_stats"] = rs;
  pyb::list rv, hu;
  for (const auto& v : m.round_values) rv.append(opt(v));
  for (const auto& v : m.host_union) hu.append(opt(v));
  d["round_values"] = rv;
  d["round_stats"] = summary(m.round_stats);
  d["host_union"] = hu;
  d["host_union_stats"] = summary(m.host_union_stats);
  return d;
}

pyb::dict counts_dict(const trace::ParseCounts& c) {
  pyb::dict d;
  d["bytes"] = c.bytes;
  d["lines"] = c.lines;
  d["heads"] = c.heads;
  d["parsed"] = c.parsed;
  d["unknown_version"] = c.unknown_version;
  d["torn"] = c.torn;
  d["bad_escapes"] = c.bad_escapes;
  d["anchor_heads"] = c.anchor_heads;
  d["anchors"] = c.anchors;
  d["torn_anchors"] = c.torn_anchors;
  d["duplicate_anchors"] = c.duplicate_anchors;
  d["missing_anchors"] = c.missing_anchors;
  return d;
}

std::shared_ptr<Analysis> analyse(const std::vector<std::string>& paths, std::optional<int> ranks,
                                  std::optional<int> rounds, int warmup, std::optional<int> dispatches,
                                  const std::string& rank_by, bool require_root, bool require_orch, bool require_sched,
                                  const std::optional<std::string>& root, const std::optional<std::string>& orch,
                                  const std::optional<std::string>& sched,
                                  const std::optional<std::string>& device_wall, bool allow_discarded) {
  if (paths.empty()) throw_error(StatusCode::kInvalidArgument, "analyse: no log paths");
  trace::MatrixOptions o;
  o.ranks = ranks;
  o.rounds = rounds;
  o.warmup = warmup;
  o.dispatches_per_round = dispatches;
  if (rank_by == "auto")
    o.rank_by = trace::RankBy::kAuto;
  else if (rank_by == "pid")
    o.rank_by = trace::RankBy::kPid;
  else if (rank_by == "attr")
    o.rank_by = trace::RankBy::kAttr;
  else
    throw_error(StatusCode::kInvalidArgument, "analyse: rank_by '" + rank_by + "' (accepted: auto, pid, attr)");
  o.require_root = require_root;
  o.require_orch = require_orch;
  o.require_sched = require_sched;
  o.allow_discarded = allow_discarded;
  auto a = std::make_shared<Analysis>();
  if (root) a->names.root = *root;
  if (orch) a->names.orch = *orch;
  if (sched) a->names.sched = *sched;
  if (device_wall) a->names.device_wall = *device_wall;
  {
    Expected<trace::Trace> t = Status();
    {
      pyb::gil_scoped_release nogil;
      t = trace::parse_files(paths);
    }
    if (!t.ok()) throw_status(t.status().with_context("analyse"));
    a->trace = std::move(*t);
  }
  a->invocations = trace::group_invocations(a->trace, a->names);
  auto m = trace::build_matrix(a->trace, a->invocations, a->names, o);
  if (!m.ok()) throw_status(m.status().with_context("analyse"));
  a->matrix = std::move(*m);
  return a;
}

}  // namespace

void bind_trace(pyb::module_& m) {
  pyb::class_<Analysis, std::shared_ptr<Analysis>>(m, "_Analysis")
      .def("matrix", [](const Analysis& a) { return matrix_dict(a.matrix); })
      .def("counts", [](const Analysis& a) { return counts_dict(a.trace.counts); })
      .def("diagnostics",
           [](const Analysis& a) {
             pyb::list l;
             for (const auto& d : a.trace.diagnostics) {
               l.append(pyb::make_tuple(std::string(trace::diagnostic_kind_name(d.kind)), d.where, d.message));
             }
             return l;
           })
      .def_property_readonly("diagnostics_dropped", [](const Analysis& a) { return a.trace.diagnostics_dropped; })
      .def_property_readonly("sources", [](const Analysis& a) { return a.trace.sources; })
      .def_property_readonly("span_count", [](const Analysis& a) { return a.trace.spans.size(); })
      .def_property_readonly("invocation_count", [](const Analysis& a) { return a.invocations.size(); })
      .def("exit_code", [](const Analysis& a) { return trace::verdict_exit_code(a.trace, a.matrix); })
      .def("render_summary",
           [](const Analysis& a) { return trace::render_callable_summary(a.trace, a.invocations, a.names); })
      .def("render_rounds_table",
           [](const Analysis& a) { return trace::render_rounds_table(a.trace, a.invocations, a.names); })
      .def("render_tree", [](const Analysis& a) { return trace::render_tree(a.trace, a.invocations, a.names); })
      .def("render_matrix", [](const Analysis& a) { return trace::render_matrix(a.trace, a.matrix); })
      .def("render_json", [](const Analysis& a) { return trace::render_json(a.trace, a.matrix); })
      .def("write_chrome", [](const Analysis& a, const std::string& path) {
        Status s = trace::write_chrome_trace(a.trace, a.invocations, a.matrix, a.names, path);
        if (!s.ok()) throw_status(s.with_context("write_chrome"));
      });
  m.def("_analyse", &analyse, pyb::arg("paths"), pyb::arg("ranks"), pyb::arg("rounds"), pyb::arg("warmup"),
        pyb::arg("dispatches"), pyb::arg("rank_by"), pyb::arg("require_root"), pyb::arg("require_orch"),
        pyb::arg("require_sched"), pyb::arg("root"), pyb::arg("orch"), pyb::arg("sched"), pyb::arg("device_wall"),
        pyb::arg("allow_discarded"));
}

}  // namespace taskring::py
