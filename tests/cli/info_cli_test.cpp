// `taskring info` reports the BLAS kernels OpenBLAS picked, and says what to
// do when they are its generic fallback on a CPU with wider vector units; the
// tool itself replaces that fallback unless the user chose a kernel set.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace {

// Runs `env ENV taskring info --json` and parses its stdout.
nlohmann::json info_json(const std::string& env) {
  const std::string cmd = "timeout 60 env " + env + " " + std::string(TASKRING_BIN) + " info --json";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return nullptr;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int st = pclose(p);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return nullptr;
  return nlohmann::json::parse(out, nullptr, false);
}

bool has_avx2_fma() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

TEST(InfoCli, NamesTheBlasKernelsAndAdvisesAgainstTheGenericFallback) {
  if (!has_avx2_fma()) GTEST_SKIP() << "the advice is for x86-64 CPUs with AVX2 and FMA";
  nlohmann::json j = info_json("OPENBLAS_CORETYPE=Prescott");
  ASSERT_TRUE(j.is_object()) << "taskring info --json failed or printed no JSON";
  EXPECT_EQ(j["blas"]["core"], "Prescott");
  EXPECT_NE(j["blas"]["config"].get<std::string>().find("OpenBLAS"), std::string::npos) << j["blas"];
  const std::string advice = j["blas"]["advice"];
  EXPECT_NE(advice.find("OPENBLAS_CORETYPE="), std::string::npos) << advice;
}

// Without OPENBLAS_CORETYPE the tool never runs a generic set on such a CPU:
// OpenBLAS recognised it, or the tool re-executed itself with a better set
// (on the Emerald Rapids guest OpenBLAS 0.3.21 picks Prescott).
TEST(InfoCli, TheToolReplacesAGenericKernelSetItself) {
  if (!has_avx2_fma()) GTEST_SKIP() << "the replacement is for x86-64 CPUs with AVX2 and FMA";
  nlohmann::json j = info_json("-u OPENBLAS_CORETYPE -u TASKRING_BLAS_REPLACED");
  ASSERT_TRUE(j.is_object()) << "taskring info --json failed or printed no JSON";
  const std::string core = j["blas"]["core"];
  for (const char* generic : {"Prescott", "Core2", "Nehalem", "Katmai", "Banias", "Atom"})
    EXPECT_NE(core, generic) << j["blas"];
  EXPECT_EQ(j["blas"]["advice"], "") << j["blas"];
  const std::string replaced = j["blas"]["replaced"];
  if (!replaced.empty()) EXPECT_NE(j["blas"]["config"].get<std::string>().find(core), std::string::npos) << j["blas"];
}

TEST(InfoCli, GivesNoAdviceForAMatchingKernelSet) {
  if (!has_avx2_fma()) GTEST_SKIP() << "Haswell kernels need AVX2 and FMA";
  nlohmann::json j = info_json("OPENBLAS_CORETYPE=Haswell");
  ASSERT_TRUE(j.is_object()) << "taskring info --json failed or printed no JSON";
  EXPECT_EQ(j["blas"]["core"], "Haswell");
  EXPECT_EQ(j["blas"]["advice"], "") << j["blas"];
}

}  // namespace
