# cmake -P script run by the CTest test `meta.every_test_source_is_built`.
# Fails, naming each file, when a tests/**/*_test.cpp or *_test.c is compiled
# by no test target: a test source that no target builds never runs, and
# nothing else would notice.
#   -DROOT=<project root>  -DLIST=<file with one registered absolute path per line>
#   -DSKIP=<;-list of dirs relative to ROOT left out by TASKRING_SKIP_DIRS>
cmake_minimum_required(VERSION 3.25)
if(NOT ROOT OR NOT LIST)
  message(FATAL_ERROR "usage: cmake -DROOT=<dir> -DLIST=<file> [-DSKIP=<dirs>] -P CheckTestSources.cmake")
endif()
file(STRINGS "${LIST}" registered)
file(GLOB_RECURSE found LIST_DIRECTORIES false "${ROOT}/tests/*_test.cpp" "${ROOT}/tests/*_test.c")
list(SORT found)
set(orphans "")
foreach(f ${found})
  file(RELATIVE_PATH rel "${ROOT}" "${f}")
  set(skipped FALSE)
  foreach(d ${SKIP})
    string(FIND "${rel}" "${d}/" at)
    if(at EQUAL 0)
      set(skipped TRUE)
    endif()
  endforeach()
  if(NOT skipped AND NOT f IN_LIST registered)
    list(APPEND orphans "${rel}")
  endif()
endforeach()
list(LENGTH found n)
if(orphans)
  list(JOIN orphans "\n  " text)
  message(FATAL_ERROR "test sources built by no test target (add them to a taskring_add_test in "
                      "their folder's CMakeLists.txt):\n  ${text}")
endif()
message(STATUS "all ${n} test sources under tests/ belong to a test target")
