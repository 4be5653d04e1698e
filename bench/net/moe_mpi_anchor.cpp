// bench_moe_mpi: the MoE layer of `taskring bench moe` written directly on
// MPI, the anchor a user would pick instead of taskring (issue 36 item 4):
//
//   mpirun --oversubscribe -np 8 bench_moe_mpi [--rounds 8] [--warmup 2]
//       [--balanced-routing] [--tokens 16] [--hidden 64] [--experts 16]
//       [--topk 2] [--ffn 64] [--seed 1] [--json] [--corrupt] [--digest]
//       [--deadline-s 300]
//
// One process per rank; the step is moe_mpi_step.hpp (taskring's gating and
// expert FFN kernels, MPI_Alltoall + two MPI_Alltoallv). Each round: reset
// the outputs, MPI_Barrier, MPI_Wtime, the step, MPI_Barrier, MPI_Wtime; the
// round's time is the maximum over the ranks. After every round (warmup too)
// each rank checks its outputs with the moe workload's own golden
// (workloads/moe_reference.hpp: routes and received rows bit for bit, the
// output within the BF16 tolerance). Prints a table, or with --json the
// numbers as JSON on stdout (rank 0). Exit 0: every round passed; 1: a
// golden failed; 2: bad options. --corrupt perturbs one output element of the
// last rank after the last round, before its check: that run must exit 1.
// --digest: after the last round every rank prints the line `taskring run moe
// --digest=1` prints for its rank (FNV-1a of out, and of recv_x + recv_meta),
// so the anchor's bits can be compared with taskring's.
// --deadline-s: a rank still running after it says so and exits 124
// (SIGALRM), and mpirun ends the job.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cpu_model.hpp"
#include "load_average.hpp"
#include "moe_mpi_step.hpp"
#include "taskring/kernels/tile_cast.hpp"
#include "taskring/workloads/moe_reference.hpp"

using namespace taskring;
using taskring::bench::MoeMpiRank;

namespace {

struct Options {
  node::MoeShape s{16, 64, 16, 2, 64, 0};
  uint64_t seed = 1;
  bool balanced = false, json = false, corrupt = false, digest = false;
  int rounds = 8, warmup = 2, deadline_s = 300;
};

// Empty on success, else what was wrong (named by flag).
std::string parse(int argc, char** argv, Options& o) {
  auto number = [&](int& i, const char* flag, long lo, long hi, long& v) -> std::string {
    if (i + 1 >= argc) return std::string(flag) + " needs a value";
    char* end = nullptr;
    v = std::strtol(argv[++i], &end, 10);
    if (*argv[i] == '\0' || *end != '\0' || v < lo || v > hi)
      return std::string(flag) + " " + argv[i] + ": expected an integer in " + std::to_string(lo) + ".." +
             std::to_string(hi);
    return "";
  };
  struct U32 {
    const char* flag;
    uint32_t* v;
    long hi;
  };
  const U32 shape[] = {{"--tokens", &o.s.tokens, 4096},
                       {"--hidden", &o.s.hidden, 4096},
                       {"--experts", &o.s.experts, 1024},
                       {"--topk", &o.s.topk, 64},
                       {"--ffn", &o.s.ffn, 8192}};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    long v = 0;
    std::string err;
    const U32* u = std::find_if(std::begin(shape), std::end(shape), [&](const U32& x) { return a == x.flag; });
    if (u != std::end(shape)) {
      if ((err = number(i, u->flag, 1, u->hi, v)).empty()) *u->v = static_cast<uint32_t>(v);
    } else if (a == "--rounds") {
      if ((err = number(i, "--rounds", 1, 100000, v)).empty()) o.rounds = static_cast<int>(v);
    } else if (a == "--warmup") {
      if ((err = number(i, "--warmup", 0, 100000, v)).empty()) o.warmup = static_cast<int>(v);
    } else if (a == "--seed") {
      if ((err = number(i, "--seed", 0, INT32_MAX, v)).empty()) o.seed = static_cast<uint64_t>(v);
    } else if (a == "--deadline-s") {
      if ((err = number(i, "--deadline-s", 1, 86400, v)).empty()) o.deadline_s = static_cast<int>(v);
    } else if (a == "--balanced-routing") {
      o.balanced = true;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--corrupt") {
      o.corrupt = true;
    } else if (a == "--digest") {
      o.digest = true;
    } else {
      err = "unknown option '" + a + "'";
    }
    if (!err.empty()) return err;
  }
  return "";
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

nlohmann::json summary(const std::vector<double>& v) {
  return {{"values", v},
          {"median", median(v)},
          {"min", v.empty() ? 0 : *std::min_element(v.begin(), v.end())},
          {"max", v.empty() ? 0 : *std::max_element(v.begin(), v.end())}};
}

uint64_t fnv1a(uint64_t h, const void* p, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ull;
  return h;
}

// The moe workload's digest line of this rank, printed in rank order.
void print_digest(const MoeMpiRank& r) {
  const uint64_t basis = 14695981039346656037ull;
  const uint64_t o = fnv1a(basis, r.out.data(), 2 * r.out.size());
  const uint64_t rv =
      fnv1a(fnv1a(basis, r.recv_x.data(), 2 * r.recv_x.size()), r.recv_meta.data(), 4 * r.recv_meta.size());
  for (int q = 0; q < r.ranks; ++q) {
    if (q == r.rank) {
      std::printf("moe digest rank %d out %016llx recv %016llx\n", r.rank, static_cast<unsigned long long>(o),
                  static_cast<unsigned long long>(rv));
      std::fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// The deadline's message, written from the SIGALRM handler (only
// async-signal-safe calls there, so it is formatted before the alarm is set:
// the one piece of global state, read by the handler alone).
char g_deadline_msg[160];
size_t g_deadline_len = 0;

void on_deadline(int) {
  ssize_t w = write(2, g_deadline_msg, g_deadline_len);
  (void)w;
  _exit(124);
}

void arm_deadline(int rank, int seconds) {
  const int n = std::snprintf(g_deadline_msg, sizeof g_deadline_msg,
                              "bench_moe_mpi: rank %d still running after --deadline-s %d: ending it\n", rank, seconds);
  g_deadline_len = n > 0 ? std::min(static_cast<size_t>(n), sizeof g_deadline_msg - 1) : 0;
  std::signal(SIGALRM, on_deadline);
  alarm(static_cast<unsigned>(seconds));
}

// What rank 0 keeps of the measured rounds (times in µs, maxima over ranks).
struct Results {
  std::vector<double> round_us, step_us;
  std::vector<std::vector<double>> phase_us = std::vector<std::vector<double>>(bench::kMoePhases);
  int passed = 0, checked = 0;  // rounds (warmup included) whose golden passed on every rank
  int fail_round = -1, fail_rank = -1;
  std::string fail_message;
  workloads::GoldenStats last;  // rank 0's stats of the last round
};

// The check of one round on every rank; rank 0 learns the first failing
// rank's message.
void agree_on_golden(const Status& st, int rank, int round, Results& res) {
  const int mine = st.ok() ? INT_MAX : rank;
  int first_bad = INT_MAX;
  MPI_Allreduce(&mine, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  ++res.checked;
  if (first_bad == INT_MAX) {
    ++res.passed;
    return;
  }
  char msg[1024] = {};
  if (rank == first_bad) std::snprintf(msg, sizeof msg, "%s", st.to_string().c_str());
  MPI_Bcast(msg, sizeof msg, MPI_CHAR, first_bad, MPI_COMM_WORLD);
  if (res.fail_round < 0) res.fail_round = round, res.fail_rank = first_bad, res.fail_message = msg;
}

// Warmup + measured rounds; every rank returns, rank 0's Results hold the data.
Results run_rounds(const Options& o, MoeMpiRank& r, const workloads::MoeReference& ref,
                   const std::vector<workloads::MoeInputs>& inputs) {
  Results res;
  const int n = r.ranks;
  for (int i = 0; i < o.warmup + o.rounds; ++i) {
    bench::reset_moe_outputs(r);
    double ph[bench::kMoePhases] = {};
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    Status st = bench::moe_mpi_step(r, MPI_COMM_WORLD, ph);
    const double t_step = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t_round = MPI_Wtime() - t0;
    if (!st.ok()) {
      std::fprintf(stderr, "bench_moe_mpi: rank %d round %d: %s\n", r.rank, i, st.to_string().c_str());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const bool last = i == o.warmup + o.rounds - 1;
    if (o.corrupt && last && r.rank == n - 1) {  // one element, far outside the tolerance
      const float v = tile::bf16_bits_to_float(r.out[0]);
      r.out[0] = tile::float_to_bf16_bits(v + static_cast<float>(ref.peak) + 1.0f);
    }
    const workloads::MoeOutputs out{r.ids.data(), r.recv_count.data(), r.recv_meta.data(), r.recv_x.data(),
                                    r.out.data()};
    workloads::GoldenStats gs;
    const Status golden = workloads::check_moe_outputs(r.s, ref, inputs, r.rank, {&out, 1}, &gs);
    if (!golden.ok())
      std::fprintf(stderr, "bench_moe_mpi: rank %d round %d: %s\n", r.rank, i, golden.to_string().c_str());
    agree_on_golden(golden, r.rank, i, res);
    double mine[2 + bench::kMoePhases] = {t_round, t_step}, mx[2 + bench::kMoePhases] = {};
    std::copy(ph, ph + bench::kMoePhases, mine + 2);
    MPI_Reduce(mine, mx, 2 + bench::kMoePhases, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (i < o.warmup || r.rank != 0) continue;
    res.round_us.push_back(mx[0] * 1e6);
    res.step_us.push_back(mx[1] * 1e6);
    for (int p = 0; p < bench::kMoePhases; ++p) res.phase_us[p].push_back(mx[2 + p] * 1e6);
    res.last = gs;
  }
  return res;
}

nlohmann::json to_json(const Options& o, int n, const Results& res, const std::string& load_before,
                       const std::string& load_after) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(mpi_version, &len);
  nlohmann::json phases;
  for (int p = 0; p < bench::kMoePhases; ++p) phases[bench::kMoePhaseNames[p]] = summary(res.phase_us[p]);
  nlohmann::json failure = nullptr;
  if (res.fail_round >= 0)
    failure = {{"round", res.fail_round}, {"rank", res.fail_rank}, {"message", res.fail_message}};
  const bool ok = res.passed == res.checked;
  return {{"schema", "taskring.moe_mpi_anchor/1"},
          {"status", ok ? "ok" : "golden_failed"},
          {"ranks", n},
          {"shape",
           {{"tokens", o.s.tokens},
            {"hidden", o.s.hidden},
            {"experts", o.s.experts},
            {"topk", o.s.topk},
            {"ffn", o.s.ffn},
            {"capacity", o.s.cap(n)}}},
          {"balanced_routing", o.balanced},
          {"seed", o.seed},
          {"rounds", o.rounds},
          {"warmup", o.warmup},
          {"stats",
           {{"round_us", summary(res.round_us)}, {"step_max_us", summary(res.step_us)}, {"phases_max_us", phases}}},
          {"golden",
           {{"passed_rounds", res.passed},
            {"checked_rounds", res.checked},
            {"failure", failure},
            {"rank0_last_round",
             {{"checked", res.last.checked},
              {"max_abs_err", res.last.max_abs_err},
              {"max_rel_err", res.last.max_rel_err}}}}},
          {"machine",
           {{"host", host},
            {"cpu", bench::cpu_model()},
            {"cpus", std::thread::hardware_concurrency()},
            {"mpi", std::string(mpi_version, std::strlen(mpi_version))}}},
          {"load_before", load_before},
          {"load_after", load_after}};
}

void print_table(const nlohmann::json& j) {
  const auto& s = j["shape"];
  std::printf("MoE step on MPI (the anchor): %d ranks, %u tokens/rank, hidden %u, %u experts, top-%u, ffn %u%s\n",
              j["ranks"].get<int>(), s["tokens"].get<uint32_t>(), s["hidden"].get<uint32_t>(),
              s["experts"].get<uint32_t>(), s["topk"].get<uint32_t>(), s["ffn"].get<uint32_t>(),
              j["balanced_routing"].get<bool>() ? ", balanced routing" : "");
  std::printf("machine: %s, %u CPUs, host %s; load %s -> %s\n", j["machine"]["cpu"].get<std::string>().c_str(),
              j["machine"]["cpus"].get<unsigned>(), j["machine"]["host"].get<std::string>().c_str(),
              j["load_before"].get<std::string>().c_str(), j["load_after"].get<std::string>().c_str());
  std::printf("%d rounds after %d warmup; times are maxima over the ranks\n\n", j["rounds"].get<int>(),
              j["warmup"].get<int>());
  std::printf("| metric (us) | median | min | max |\n| --- | --- | --- | --- |\n");
  auto row = [](const char* name, const nlohmann::json& x) {
    std::printf("| %s | %.1f | %.1f | %.1f |\n", name, x["median"].get<double>(), x["min"].get<double>(),
                x["max"].get<double>());
  };
  row("round (barrier to barrier)", j["stats"]["round_us"]);
  row("step (without the closing barrier)", j["stats"]["step_max_us"]);
  for (int p = 0; p < bench::kMoePhases; ++p)
    row(("phase " + std::string(bench::kMoePhaseNames[p])).c_str(),
        j["stats"]["phases_max_us"][bench::kMoePhaseNames[p]]);
  const auto& g = j["golden"];
  std::printf("\ngolden: %d of %d rounds passed (warmup included)%s\n", g["passed_rounds"].get<int>(),
              g["checked_rounds"].get<int>(), g["failure"].is_null() ? "" : "; first failure:");
  if (!g["failure"].is_null())
    std::printf("  round %d, rank %d: %s\n", g["failure"]["round"].get<int>(), g["failure"]["rank"].get<int>(),
                g["failure"]["message"].get<std::string>().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int n = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Options o;
  std::string err = parse(argc, argv, o);
  MoeMpiRank r;
  if (err.empty()) {
    Status st = bench::init_moe_mpi_rank(r, o.s, n, rank, o.balanced, o.seed);
    if (!st.ok()) err = st.message();
  }
  if (!err.empty()) {
    if (rank == 0) std::fprintf(stderr, "bench_moe_mpi: %s\n", err.c_str());
    MPI_Finalize();
    return 2;
  }
  arm_deadline(rank, o.deadline_s);
  const std::string load_before = bench::loadavg();
  // Every rank's inputs, derived from the seed here, for the reference.
  std::vector<bench::MoeMpiInputs> all(static_cast<size_t>(n));
  std::vector<workloads::MoeInputs> inputs(static_cast<size_t>(n));
  for (int q = 0; q < n; ++q) {
    bench::fill_moe_mpi_inputs(all[q], o.s, n, q, o.seed);
    inputs[q] = all[q].view();
  }
  const workloads::MoeReference ref = workloads::moe_reference(o.s, inputs, o.balanced);
  const Results res = run_rounds(o, r, ref, inputs);
  if (o.digest) print_digest(r);
  const bool ok = res.passed == res.checked;
  if (rank == 0) {
    const nlohmann::json j = to_json(o, n, res, load_before, bench::loadavg());
    if (o.json) {
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      print_table(j);
    }
    std::fflush(stdout);
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
