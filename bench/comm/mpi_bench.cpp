// bench_comm_mpi: Open MPI's MPI_Allreduce (FP32 sum) and MPI_Barrier, the
// peer of bench_comm, run under mpirun by bench/comm/run_comm_bench with
// the same sizes. Rank 0 prints one JSON object per line:
//   {"impl": "openmpi", "ranks": n, "op": "allreduce"|"barrier", "bytes": b, "us": t, "bus_gbps": g}
// Time per operation: the slowest rank's average over R operations after a
// barrier, median of `samples` repetitions.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int n = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int samples = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  auto timed = [&](auto&& op, int reps) {
    std::vector<double> s;
    for (int k = 0; k < samples; ++k) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int i = 0; i < reps; ++i) op();
      double mine = (MPI_Wtime() - t0) / reps, worst = 0;
      MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      s.push_back(worst * 1e6);
    }
    std::sort(s.begin(), s.end());
    return s[s.size() / 2];
  };
  const double bar = timed([] { MPI_Barrier(MPI_COMM_WORLD); }, 200);
  if (rank == 0)
    std::printf(
        "{\"impl\": \"openmpi\", \"ranks\": %d, \"op\": \"barrier\", \"bytes\": 0, \"us\": %.3f, \"bus_gbps\": 0}\n", n,
        bar);
  for (long bytes : {4096L, 65536L, 1L << 20, 4L << 20, 16L << 20}) {
    std::vector<float> in(bytes / 4, 1.0f), out(bytes / 4);
    const int reps = static_cast<int>(std::clamp<long>((64L << 20) / bytes, 5, 2000));
    const double us = timed(
        [&] { MPI_Allreduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); },
        reps);
    const double bus = 2.0 * (n - 1) / n * static_cast<double>(bytes) / (us * 1000.0);
    if (rank == 0)
      std::printf(
          "{\"impl\": \"openmpi\", \"ranks\": %d, \"op\": \"allreduce\", \"bytes\": %ld, \"us\": %.3f, \"bus_gbps\": "
          "%.4f}\n",
          n, bytes, us, bus);
  }
  MPI_Finalize();
  return 0;
}
