# Core tests: distribution arithmetic, multi-rank runs against a serial
# product, generator determinism, both I/O paths, bad input.
add_executable(test-grid ${PROJECT_SOURCE_DIR}/tests/unit/test_grid.c)
target_link_libraries(test-grid PRIVATE dd_core)
target_compile_options(test-grid PRIVATE ${DD_WARN})
add_test(NAME unit_grid_every_element_owned_once COMMAND test-grid)
set_tests_properties(unit_grid_every_element_owned_once PROPERTIES LABELS unit TIMEOUT 20)

add_executable(test-rng ${PROJECT_SOURCE_DIR}/tests/unit/test_rng.c)
target_link_libraries(test-rng PRIVATE dd_core)
target_compile_options(test-rng PRIVATE ${DD_WARN})
add_test(NAME unit_rng_values_as_defined_every_seed_bit_counts COMMAND test-rng)
set_tests_properties(unit_rng_values_as_defined_every_seed_bit_counts PROPERTIES LABELS unit TIMEOUT 20)

# dgemm_dmma's stream-K plan and bookkeeping (host arithmetic: no GPU needed)
add_executable(test-sk-plan ${PROJECT_SOURCE_DIR}/tests/unit/test_sk_plan.c)
target_include_directories(test-sk-plan PRIVATE ${PROJECT_SOURCE_DIR}/kernels)
target_compile_options(test-sk-plan PRIVATE ${DD_WARN})
add_test(NAME unit_sk_plan_every_k_tile_once COMMAND test-sk-plan)
set_tests_properties(unit_sk_plan_every_k_tile_once PROPERTIES LABELS unit TIMEOUT 20)

add_executable(test-engine-cpu ${PROJECT_SOURCE_DIR}/tests/unit/test_engine_cpu.c)
target_link_libraries(test-engine-cpu PRIVATE dd_core)
target_compile_options(test-engine-cpu PRIVATE ${DD_WARN})
add_test(NAME unit_cpu_engine_multiply_and_progress_hook COMMAND test-engine-cpu)
set_tests_properties(unit_cpu_engine_multiply_and_progress_hook PROPERTIES LABELS unit TIMEOUT 20
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")

add_executable(dd-compare ${PROJECT_SOURCE_DIR}/tests/tools/dd_compare.c)
target_link_libraries(dd-compare PRIVATE dd_core)
target_compile_options(dd-compare PRIVATE ${DD_WARN})
add_executable(dd-mkbad ${PROJECT_SOURCE_DIR}/tests/tools/dd_mkbad.c)
target_link_libraries(dd-mkbad PRIVATE dd_core)
target_compile_options(dd-mkbad PRIVATE ${DD_WARN})

string(JOIN " " DD_MPIRUN_PREFIX ${MPIEXEC_EXE} ${DD_MPIRUN_FLAGS})
set(DD_TEST_ENV
  "DD_BIN=$<TARGET_FILE:dgemm-dist>"
  "DD_COMPARE=$<TARGET_FILE:dd-compare>"
  "DD_MKBAD=$<TARGET_FILE:dd-mkbad>"
  "DD_MPIRUN=${DD_MPIRUN_PREFIX}"
  "OMPI_ALLOW_RUN_AS_ROOT=1" "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
  "OMPI_MCA_rmaps_base_oversubscribe=1" "OMPI_MCA_btl_vader_single_copy_mechanism=none"
  "OPENBLAS_NUM_THREADS=1")

# dd_case(NAME RANKS M N K DTYPE [options...]) — a run checked against the serial product
function(dd_case name ranks m n k dtype)
  add_test(NAME ${name}
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/run_case.sh ${ranks} ${m} ${n} ${k} ${dtype} ${ARGN})
  # timeouts near each test's real duration (1-3 s here), so a hang fails
  # in seconds, not minutes
  set_tests_properties(${name} PROPERTIES LABELS "mpi" TIMEOUT 40
    ENVIRONMENT "${DD_TEST_ENV}" PROCESSORS ${ranks})
endfunction()

# Odd shapes at 1, 2, 3, 4 and 6 ranks, both types; small panels so that
# many panels and every ownership boundary are exercised.
dd_case(mpi_1rank_1x1x1_f64            1 1 1 1 f64)
dd_case(mpi_1rank_primes_f32           1 37 41 43 f32 --panel 8)
dd_case(mpi_2ranks_primes_f64          2 37 41 43 f64 --panel 7)
dd_case(mpi_2ranks_grid2x1_tall_f32    2 97 5 13 f32 --grid 2x1 --panel 4)
dd_case(mpi_3ranks_wide_f64            3 5 89 17 f64 --panel 3)
dd_case(mpi_3ranks_grid3x1_f32         3 29 31 7 f32 --grid 3x1 --panel 2)
dd_case(mpi_4ranks_2x2_mnk_differ_f64  4 53 29 71 f64 --panel 9)
dd_case(mpi_4ranks_2x2_f32_lookahead3  4 64 48 40 f32 --panel 4 --lookahead 3)
dd_case(mpi_4ranks_1x4_k_lt_q_f64      4 16 16 3 f64 --grid 1x4 --panel 2)
dd_case(mpi_6ranks_2x3_primes_f64      6 23 19 29 f64 --panel 5)
dd_case(mpi_6ranks_3x2_rows_lt_p_f32   6 2 13 11 f32 --grid 3x2 --panel 3)
dd_case(mpi_6ranks_1x1x1_empty_blocks_f64 6 1 1 1 f64)
dd_case(mpi_4ranks_bigger_f64          4 300 280 260 f64)
# both I/O paths, explicitly
dd_case(io_independent_3ranks_f64      3 31 33 35 f64 --io independent --panel 6)
dd_case(io_independent_4ranks_f32      4 31 33 35 f32 --io independent --grid 4x1)
if(HDF5_IS_PARALLEL)
  dd_case(io_collective_3ranks_f64     3 31 33 35 f64 --io collective --panel 6)
  dd_case(io_collective_6ranks_f32     6 5 7 9 f32 --io collective)
endif()

# gen writes the same file whatever the rank count
add_test(NAME gen_same_file_for_1_2_3_ranks
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/gen_determinism.sh)
set_tests_properties(gen_same_file_for_1_2_3_ranks PROPERTIES LABELS "mpi;io" TIMEOUT 60
  ENVIRONMENT "${DD_TEST_ENV}")

# every bad input: one message, non-zero exit on all ranks, no hang, no output
add_test(NAME cli_bad_input_one_message_no_output
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/bad_input.sh)
set_tests_properties(cli_bad_input_one_message_no_output PROPERTIES LABELS "cli" TIMEOUT 120
  ENVIRONMENT "${DD_TEST_ENV}")

# report, dry run, help, version, generated inputs, JSON appends
add_test(NAME cli_report_dryrun_help_json
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/report.sh)
set_tests_properties(cli_report_dryrun_help_json PROPERTIES LABELS "cli" TIMEOUT 60
  ENVIRONMENT "${DD_TEST_ENV}")

# Benchmarks (not tests): the CPU multiply phase against direct BLAS.
add_executable(cpu-bench ${PROJECT_SOURCE_DIR}/tests/bench/cpu_bench.c)
target_link_libraries(cpu-bench PRIVATE dd_core)
target_compile_options(cpu-bench PRIVATE ${DD_WARN})
