# The command line's syntax: GNU forms, `--`, no abbreviations, repeated
# options, the range of every number, gen's refusals, empty names.
# The test reads the lookahead bound from the header that defines it.
file(STRINGS ${PROJECT_SOURCE_DIR}/include/dgemm_dist.h _dd_la_line
  REGEX "^#define DGEMM_DIST_LOOKAHEAD_MAX [0-9]+")
string(REGEX MATCH "[0-9]+$" DD_LOOKAHEAD_MAX "${_dd_la_line}")
if(NOT DD_LOOKAHEAD_MAX)
  message(FATAL_ERROR "tests/cli.cmake: no '#define DGEMM_DIST_LOOKAHEAD_MAX <number>' in include/dgemm_dist.h")
endif()
add_test(NAME cli_options_gnu_forms_bounds_and_repeats
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/options.sh)
# DD_TEST_ENV comes from core.cmake, which is included after this file
# (sorted order): set the environment once the whole directory is read.
function(_dd_cli_test_env)
  set_tests_properties(cli_options_gnu_forms_bounds_and_repeats PROPERTIES LABELS "cli"
    TIMEOUT 90 ENVIRONMENT "${DD_TEST_ENV};DD_LOOKAHEAD_MAX=${DD_LOOKAHEAD_MAX}")
endfunction()
cmake_language(DEFER CALL _dd_cli_test_env)
