# taskring_add_test(<name> SOURCES <src>... [LIBS <lib>...] [LABELS <label>...]
#                   [TIMEOUT <seconds>])
# Builds one GoogleTest executable and registers its tests with CTest, each
# with a deadline (default 120 s) so that no test can hang CI.
include(GoogleTest)
function(taskring_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  add_executable(${name} ${T_SOURCES})
  taskring_register_test_sources(${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  # Labels are not passed through gtest_discover_tests(PROPERTIES): its
  # generated script splits every ';', so "chip;sanitize" arrived as
  # `LABELS chip sanitize` (one label plus a stray property) and no test
  # carried 'sanitize'. Instead a second CTest include, read after the
  # discovered list, labels every test of the executable with the whole list
  # (checked by `ctest -N -L sanitize`).
  gtest_discover_tests(${name}
    DISCOVERY_TIMEOUT 60
    TEST_LIST ${name}_TESTS
    PROPERTIES TIMEOUT ${T_TIMEOUT})
  if("sanitize" IN_LIST T_LABELS)
    set_property(GLOBAL APPEND PROPERTY TASKRING_SANITIZE_TARGETS ${name})
  endif()
  # 'asan': fork-based suites that run under ASan+UBSan but not TSan (the
  # TSan runtime's own thread makes NodeWorker::init refuse to fork;
  # docs/testing.md).
  if("asan" IN_LIST T_LABELS)
    set_property(GLOBAL APPEND PROPERTY TASKRING_ASAN_TARGETS ${name})
  endif()
  if(T_LABELS)
    set(label_file "${CMAKE_CURRENT_BINARY_DIR}/${name}_labels.cmake")
    file(WRITE "${label_file}"
      "if(${name}_TESTS)\n  set_tests_properties(\${${name}_TESTS} PROPERTIES LABELS \"${T_LABELS}\")\nendif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${label_file}")
  endif()
endfunction()

# taskring_register_test_sources(<src>...): records sources (relative to the
# current source dir) as built by a test target, for the orphan check
# (taskring_check_test_sources). taskring_add_test calls it; a hand-written
# test target must call it too.
function(taskring_register_test_sources)
  foreach(src ${ARGN})
    get_filename_component(abs "${src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    set_property(GLOBAL APPEND PROPERTY TASKRING_TEST_SOURCES "${abs}")
  endforeach()
endfunction()

# taskring_check_test_sources(): registers the CTest test
# meta.every_test_source_is_built, which fails naming every
# tests/**/*_test.cpp or *_test.c that no test target builds. Call it after
# every test directory was added. The glob runs at test time, so a file
# added since the last configure is caught too. Also defines the target
# sanitize_tests: every executable labelled 'sanitize', and asan_tests: every
# one labelled 'asan'.
function(taskring_check_test_sources)
  # The executables of the 'sanitize' suites: the sanitizer presets build only
  # these (`cmake --build --preset asan --target sanitize_tests`).
  get_property(sanitize_targets GLOBAL PROPERTY TASKRING_SANITIZE_TARGETS)
  add_custom_target(sanitize_tests DEPENDS ${sanitize_targets})
  # And asan_tests: the executables labelled 'asan' (the ASan preset only).
  get_property(asan_targets GLOBAL PROPERTY TASKRING_ASAN_TARGETS)
  add_custom_target(asan_tests DEPENDS ${asan_targets})

  get_property(sources GLOBAL PROPERTY TASKRING_TEST_SOURCES)
  list(REMOVE_DUPLICATES sources)
  list(JOIN sources "\n" text)
  # Test folders that built nothing on purpose (an optional dependency is
  # missing) add themselves to the global property TASKRING_SKIPPED_TEST_DIRS.
  get_property(skipped GLOBAL PROPERTY TASKRING_SKIPPED_TEST_DIRS)
  set(skip_dirs ${TASKRING_SKIP_DIRS} ${skipped})
  set(list_file "${CMAKE_BINARY_DIR}/taskring_test_sources.txt")
  file(WRITE "${list_file}" "${text}\n")
  add_test(NAME meta.every_test_source_is_built
    COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR} -DLIST=${list_file} "-DSKIP=${skip_dirs}"
            -P ${PROJECT_SOURCE_DIR}/cmake/CheckTestSources.cmake)
  set_tests_properties(meta.every_test_source_is_built PROPERTIES TIMEOUT 30 LABELS "meta")
endfunction()

# Adds each immediate subdirectory of the current source dir that has a
# CMakeLists.txt. Lets layers and helpers land independently.
# TASKRING_SKIP_DIRS (a ;-list of paths relative to the project root) leaves
# some out, for partial developer builds.
function(taskring_add_subdirs)
  file(GLOB children LIST_DIRECTORIES true RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/*)
  list(SORT children)
  foreach(child ${children})
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/${child})
    if(rel IN_LIST TASKRING_SKIP_DIRS)
      continue()
    endif()
    if(IS_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/${child} AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${child}/CMakeLists.txt)
      add_subdirectory(${child})
    endif()
  endforeach()
endfunction()
