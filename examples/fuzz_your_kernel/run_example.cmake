# Runs the example's two fuzzers for SECONDS each: the one with the tie bug must stop with the kit's
# report naming the rule it breaks (ggml-q8_0, whose codes are roundf, alone or beside another
# recipe that agrees on the input, or ties=half-away); the correct one must run clean.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/buggy ${WORK}/correct)

string(TIMESTAMP t0 "%s")
execute_process(COMMAND ${BUGGY} -max_total_time=${SECONDS} -artifact_prefix=${WORK}/buggy/ -print_final_stats=1
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(TIMESTAMP t1 "%s")
math(EXPR took "${t1} - ${t0}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the kit did not find the tie bug in ${SECONDS} s:\n${err}")
endif()
if(NOT err MATCHES "qscheme kit: the quantize kernel DIFFERS from recipe ggml-q8_0-x86")
  message(FATAL_ERROR "the buggy kernel stopped without the kit's report (exit ${rc}):\n${err}")
endif()
if(NOT err MATCHES "(ggml-q8_0 reproduce|ties=half-away)")
  message(FATAL_ERROR "the report names neither ggml-q8_0 (roundf) nor ties=half-away:\n${err}")
endif()
file(GLOB crashes ${WORK}/buggy/crash-*)
if(NOT crashes)
  message(FATAL_ERROR "libFuzzer saved no reproducer in ${WORK}/buggy")
endif()
message(STATUS "tie bug found in ${took} s (budget ${SECONDS} s)")

execute_process(COMMAND ${CORRECT} -max_total_time=${SECONDS} -artifact_prefix=${WORK}/correct/ -print_final_stats=1
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the correct kernel failed (exit ${rc}):\n${err}")
endif()
string(REGEX MATCH "stat::number_of_executed_units: *[0-9]+" runs "${err}")
message(STATUS "correct kernel clean for ${SECONDS} s (${runs})")
