# Runs a libFuzzer binary for SECONDS on a fresh corpus seeded from SEEDS; fails on any finding
# (crash, sanitizer report, leak, an input taking over 10 s, an allocation over 2 GiB), whose
# input libFuzzer leaves in WORK/artifacts. The environment variable RINGSIDE_FUZZ_SECONDS, when
# set, overrides SECONDS (e.g. RINGSIDE_FUZZ_SECONDS=5 ctest -L slow -R fuzzer for a quick pass).
# cmake -DFUZZER=... -DSEEDS=... -DWORK=... -DSECONDS=60 -P run_fuzzer.cmake
foreach(var FUZZER SEEDS WORK SECONDS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzzer.cmake: -D${var}=... is required")
  endif()
endforeach()
if(DEFINED ENV{RINGSIDE_FUZZ_SECONDS})
  set(SECONDS $ENV{RINGSIDE_FUZZ_SECONDS})
endif()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/artifacts)
execute_process(
  COMMAND ${FUZZER} -max_total_time=${SECONDS} -print_final_stats=1 -rss_limit_mb=2048
          -malloc_limit_mb=2048 -timeout=10 -artifact_prefix=${WORK}/artifacts/ ${WORK}/corpus
          ${SEEDS}
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (${result}); the input is in ${WORK}/artifacts")
endif()
