# The environment knobs (src/base/dd_knobs.h): the registry's parse and
# warnings (unit), --help-env against docs/environment.md, no DD_ variable
# read outside the registry, and a run's bad knobs warned about once each
# (cli).
add_executable(test-knobs ${PROJECT_SOURCE_DIR}/tests/unit/test_knobs.c)
target_link_libraries(test-knobs PRIVATE dd_base)
target_compile_options(test-knobs PRIVATE ${DD_WARN})
set(_dd_knobs_env "OMPI_ALLOW_RUN_AS_ROOT=1" "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
  "OPENBLAS_NUM_THREADS=1")
add_test(NAME unit_knobs_parse_defaults_warn_once COMMAND test-knobs)
dd_mpirun(_dd_knobs_run 2)
add_test(NAME unit_knobs_warning_from_rank0_2rank COMMAND ${_dd_knobs_run} $<TARGET_FILE:test-knobs> mpi)
set_tests_properties(unit_knobs_parse_defaults_warn_once PROPERTIES LABELS unit TIMEOUT 20)
set_tests_properties(unit_knobs_warning_from_rank0_2rank PROPERTIES LABELS "unit;mpi" TIMEOUT 30
  PROCESSORS 2 ENVIRONMENT "${_dd_knobs_env}")

add_test(NAME cli_help_env_matches_docs_environment
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/help_env.sh $<TARGET_FILE:dgemm-dist> ${PROJECT_SOURCE_DIR})
add_test(NAME cli_knobs_read_only_through_the_registry
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/knobs_only.sh ${PROJECT_SOURCE_DIR})
add_test(NAME cli_knob_bad_values_warned_once_strict_refused
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/knob_warnings.sh $<TARGET_FILE:dgemm-dist>
          ${MPIEXEC_EXE} ${DD_MPIRUN_FLAGS})
set_tests_properties(cli_help_env_matches_docs_environment cli_knobs_read_only_through_the_registry
  PROPERTIES LABELS cli TIMEOUT 30 ENVIRONMENT "${_dd_knobs_env}")
set_tests_properties(cli_knob_bad_values_warned_once_strict_refused PROPERTIES LABELS "cli;mpi"
  TIMEOUT 120 PROCESSORS 2 ENVIRONMENT "${_dd_knobs_env}")
