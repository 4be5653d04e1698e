# Builds bench_overhead_omp_clang: the OpenMP peer compiled by clang++ against
# LLVM's libomp, from the same sources as bench_overhead_omp_gcc.
find_program(TASKRING_CLANGXX NAMES clang++-14 clang++ DOC "clang++ for the libomp peer")
if(NOT TASKRING_CLANGXX)
  message(STATUS "bench/peers: skipping bench_overhead_omp_clang (needs clang and libomp-dev)")
  return()
endif()

set(_dir ${CMAKE_CURRENT_SOURCE_DIR})
set(_out ${CMAKE_CURRENT_BINARY_DIR}/bench_overhead_omp_clang)
set(_srcs ${_dir}/omp/overhead_omp.cpp ${_dir}/common/options.cpp ${_dir}/common/harness.cpp ${_dir}/common/patterns.cpp)
file(GLOB _hdrs ${_dir}/common/*.hpp)
# libomp lives in LLVM's private lib dir on Debian; record it as the rpath.
execute_process(COMMAND ${TASKRING_CLANGXX} -print-resource-dir OUTPUT_VARIABLE _res OUTPUT_STRIP_TRAILING_WHITESPACE)
get_filename_component(_llvm_lib "${_res}/../.." ABSOLUTE)

add_custom_command(
  OUTPUT ${_out}
  COMMAND ${TASKRING_CLANGXX} -std=c++20 -O3 -DNDEBUG -Wall -Wextra -fopenmp=libomp -pthread
          -I${_dir} -I${TASKRING_ROOT}/include ${_srcs}
          -L${_llvm_lib} -Wl,-rpath,${_llvm_lib} -o ${_out}
  DEPENDS ${_srcs} ${_hdrs}
  COMMENT "clang++ -fopenmp=libomp: bench_overhead_omp_clang"
  VERBATIM)
# The target is not named like the file: ninja would see two rules for it.
add_custom_target(peers_omp_clang ALL DEPENDS ${_out})
add_dependencies(bench_peers peers_omp_clang)
