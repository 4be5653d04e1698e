// The (rank, round) validation matrix behind `taskring trace --expect-*`.
//
// Ranks: with RankBy::kAttr a rank is the integer `rank=` attr of the root
// span; with kPid it is a distinct pid, numbered by first appearance; kAuto
// uses attrs when every dispatching pid carries one, pids otherwise. Two pids
// that claim one rank with overlapping root windows (two runs appending to
// one log) are a warning, and a problem when the ranks are expected.
// Dispatches: a rank's non-prewarm invocations, ordered by (first appearance
// of the pid, inv). Round g (warmup included) is dispatches [g*D, (g+1)*D).
// A cell is VALID iff each of its D dispatches exists and has every required
// span (root, orch, sched by default); an invalid cell has no value, is left
// out of every statistic and is named in `problems`.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "taskring/base/expected.hpp"
#include "taskring/base/host_speed.hpp"
#include "taskring/trace/invocations.hpp"
#include "taskring/trace/span.hpp"
#include "taskring/trace/stats.hpp"

namespace taskring::trace {

enum class RankBy { kAuto, kPid, kAttr };

// Limits checked before anything is allocated, whether a count comes from an
// option or from the log (a `rank=` attr, the number of pids or dispatches):
// the matrix is sized by what the log holds and by the expectation, never
// beyond these. A rank attr above kMaxRank is a warning and its dispatches
// are ignored; any other excess is an INVALID_ARGUMENT naming the limit.
inline constexpr int kMaxRanks = 1 << 16;
inline constexpr int kMaxRank = kMaxRanks - 1;
inline constexpr int kMaxRounds = 1 << 24;
inline constexpr int kMaxWarmup = 1 << 24;
inline constexpr int kMaxDispatchesPerRound = 1 << 20;
inline constexpr int64_t kMaxCells = int64_t{1} << 20;

struct MatrixOptions {
  std::optional<int> ranks;                 // expected ranks; default: ranks seen
  std::optional<int> rounds;                // expected measured rounds; default: from the data
  int warmup = 0;                           // leading rounds per rank left out
  std::optional<int> dispatches_per_round;  // default: inferred (1 without --expect-rounds)
  RankBy rank_by = RankBy::kAuto;
  bool require_root = true;
  bool require_orch = true;
  bool require_sched = true;
  // Dispatches the matrix cannot place (a rank that is unusable or beyond
  // `ranks`, rounds beyond `warmup + rounds`) fail the verdict unless this is
  // set (`taskring trace --allow-discarded`); they are always warned about.
  bool allow_discarded = false;
};

struct Cell {
  int rank = 0;
  int round = 0;  // measured round, 0-based (warmup excluded)
  bool valid = false;
  std::vector<std::string> missing;  // what made it invalid, e.g. "sched"
  // Sums over the cell's dispatches, in µs; meaningful only when `valid`.
  double effective_us = 0;          // per dispatch: length of orch ∪ sched
  double host_us = 0;               // root durations
  std::optional<double> device_us;  // device_wall durations, when all present
  double orch_us = 0, sched_us = 0;
  std::vector<Window> host_windows;  // root windows (ns), for the host union
  // The cell's dispatches that the log holds: indices into the invocations
  // given to build_matrix, in dispatch order.
  std::vector<size_t> dispatches;
};

struct RankInfo {
  int rank = 0;
  std::vector<int64_t> pids;  // empty: the rank was expected but never seen
  size_t dispatches = 0;
};

// The largest change of a host-speed probe that still counts as steady. The
// two-speed vCPUs of docs/bench-log/2026-12-02_to_2026-12-06.md#stop-17 move by ~90 %; a probe's own
// noise on a quiet host is a few percent.
inline constexpr double kSteadyHostChange = 0.10;

// The host's CPU speed before and after a benchmark run (base/host_speed.hpp),
// set by a harness that probed it: a diagnostic, never part of the verdict.
struct HostSpeedCheck {
  std::vector<CpuSpeed> before, after;
  double largest_change = 0;  // largest_speed_change(before, after)
  bool steady() const { return largest_change <= kSteadyHostChange; }
};

// "cpu0 6.4 -> 6.5, cpu1 6.4 -> 12.8": each CPU's chunk time (us, one
// decimal) before and after, for the table and the warning.
std::string host_speed_timings(const HostSpeedCheck& h);

struct Matrix {
  int ranks = 0;
  int rounds = 0;
  int warmup = 0;
  int dispatches_per_round = 1;
  std::string rank_source;          // "pid" or "attr"
  std::vector<RankInfo> rank_info;  // one per expected rank
  std::vector<Cell> cells;          // rank-major: cells[rank * rounds + round]
  size_t valid_cells = 0;
  std::vector<std::string> problems;  // one line per invalid cell or missing rank
  std::vector<std::string> warnings;  // data that does not fit the expectation but loses no cell
  // Dispatches of the log left out of every cell (warmup rounds excepted),
  // and whether the options allowed that (MatrixOptions::allow_discarded).
  size_t discarded_dispatches = 0;
  bool allow_discarded = false;
  Summary cell_stats;               // effective_us over valid cells
  std::vector<Summary> rank_stats;  // per rank, over its valid cells
  // Per round: max across ranks of the rank's summed effective_us; nullopt
  // unless every rank's cell of that round is valid.
  std::vector<std::optional<double>> round_values;
  Summary round_stats;
  // Per round: length of the union of all ranks' root windows (µs); a
  // diagnostic (it includes start skew and host overhead), never the kernel time.
  std::vector<std::optional<double>> host_union;
  Summary host_union_stats;
  // Set by the harness after build_matrix (taskring bench); empty otherwise.
  std::optional<HostSpeedCheck> host_speed;

  const Cell& cell(int rank, int round) const { return cells[static_cast<size_t>(rank * rounds + round)]; }
  size_t invalid_cells() const { return cells.size() - valid_cells; }
};

// Sets m.host_speed from two probes of the same CPUs (before the ranks
// started, after they ended) and adds a warning naming each CPU's timings
// when the host moved by more than kSteadyHostChange. Does nothing when
// either probe is empty.
void set_host_speed(Matrix& m, std::vector<CpuSpeed> before, std::vector<CpuSpeed> after);

// The MatrixOptions fields that check_matrix_options judges.
enum class MatrixField { kRanks, kRounds, kWarmup, kDispatchesPerRound };

// The field's name in MatrixOptions: "ranks", "rounds", "warmup",
// "dispatches_per_round".
std::string_view matrix_field_name(MatrixField f);

// INVALID_ARGUMENT for impossible options (negative counts, zero rounds or
// ranks requested, zero dispatches per round) and counts beyond the limits
// above; OK otherwise. The message names the field through `name`
// (matrix_field_name when empty), so a front end can say what its user typed:
// `taskring trace` maps kRanks to "--expect-ranks".
Status check_matrix_options(const MatrixOptions& o, const std::function<std::string(MatrixField)>& name = {});

// Builds the matrix in three steps: group the dispatches by pid and rank,
// validate the counts against the expectation (warnings and problems), fill
// one cell per (rank, round). Fails with check_matrix_options' errors (fields
// named as in MatrixOptions), when the log holds more ranks than kMaxRanks,
// and when ranks x rounds exceeds kMaxCells. Work and memory are bounded by the
// dispatches in the log plus one cell per (rank, round).
Expected<Matrix> build_matrix(const Trace& trace, const std::vector<Invocation>& invocations, const StageNames& names,
                              const MatrixOptions& options);

}  // namespace taskring::trace
