# GEMM: C = alpha·op(A)·op(B) + beta·C with op in {N, T}, and column-major
# files (--order col).  Every op combination × alpha in {1, -0.5} × beta in
# {0, 1, 2.5} at 1 and 4 ranks (both element types over the two), a sample
# at 2, 3 and 6 ranks on odd shapes and grids, each against an independent
# serial product (tests/tools/dd_compare.c); a column-major file written
# with plain HDF5; BLAS's rules for alpha = 0 and beta = 0; the refusals;
# alpha and beta forgotten at load caught by the read-back.
# DD_TEST_ENV comes from core.cmake, included after this file (sorted
# order): the environment is set once the whole directory is read.
set(DD_GEMM_TESTS "")

# dd_gemm_matrix(NAME RANKS M N K FIRST_DTYPE [options...]) — the 24 cases
function(dd_gemm_matrix name ranks m n k dtype)
  add_test(NAME ${name} COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/gemm_matrix.sh
    ${ranks} ${m} ${n} ${k} ${dtype} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "mpi" TIMEOUT 240 PROCESSORS ${ranks})
  set(DD_GEMM_TESTS ${DD_GEMM_TESTS} ${name} PARENT_SCOPE)
endfunction()

# dd_gemm_case(NAME RANKS M N K DTYPE TRANSA TRANSB ALPHA BETA ORDER [options...])
function(dd_gemm_case name ranks m n k dtype ta tb alpha beta order)
  add_test(NAME ${name} COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/gemm_case.sh
    ${ranks} ${m} ${n} ${k} ${dtype} ${ta} ${tb} ${alpha} ${beta} ${order} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "mpi" TIMEOUT 120 PROCESSORS ${ranks})
  set(DD_GEMM_TESTS ${DD_GEMM_TESTS} ${name} PARENT_SCOPE)
endfunction()

# dd_gemm_checks(NAME WHAT LABELS)
function(dd_gemm_checks name what labels)
  add_test(NAME ${name} COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/gemm_checks.sh ${what})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT 180 PROCESSORS 4)
  set(DD_GEMM_TESTS ${DD_GEMM_TESTS} ${name} PARENT_SCOPE)
endfunction()

dd_gemm_matrix(gemm_all_ops_alpha_beta_1rank   1 13 11 7 f64 --panel 3)
dd_gemm_matrix(gemm_all_ops_alpha_beta_4ranks  4 13 11 7 f32 --panel 2)

dd_gemm_case(gemm_2ranks_tn_grid2x1_f32   2 29 5 17 f32 T N -0.5 2.5 row --grid 2x1 --panel 4)
dd_gemm_case(gemm_2ranks_nt_col_f64       2 5 31 23 f64 N T 1 1 col --panel 5)
dd_gemm_case(gemm_3ranks_tt_col_f64       3 23 19 29 f64 T T -0.5 0 col --panel 7 --lookahead 2)
dd_gemm_case(gemm_3ranks_nt_grid3x1_f32   3 11 13 2 f32 N T 1 2.5 row --grid 3x1)
dd_gemm_case(gemm_6ranks_tn_col_f32       6 2 13 11 f32 T N 1 2.5 col --grid 3x2 --panel 3)
dd_gemm_case(gemm_6ranks_tt_f64           6 17 7 31 f64 T T -0.5 1 row --panel 4 --io independent)

# the GPU: transposed bands turned by the engine's kernel, beta·C restored
# before each repetition and before the streamed host-to-host pass
if(DD_HAVE_CUDA)
  foreach(ranks 1 2)
    set(name gemm_gpu_${ranks}ranks_tt_col_beta_h2h)
    add_test(NAME ${name} COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/gemm_case.sh
      ${ranks} 517 389 1031 f64 T T -0.5 2.5 col --backend cuda --panel 96 --repeat 2 --warmup 1
      --host-to-host)
    set_tests_properties(${name} PROPERTIES LABELS "gpu" TIMEOUT 300 SKIP_RETURN_CODE 77
      RESOURCE_LOCK gpu)
    list(APPEND DD_GEMM_TESTS ${name})
  endforeach()
endif()

dd_gemm_checks(gemm_column_major_file_as_written  colmajor "mpi;io")
dd_gemm_checks(gemm_blas_rules_repeats_record     blas     "mpi;cli")
dd_gemm_checks(gemm_refusals_one_message          refusals "cli")
dd_gemm_checks(gemm_forgotten_alpha_beta_caught   faults   "cli")

function(_dd_gemm_test_env)
  set_tests_properties(${DD_GEMM_TESTS} PROPERTIES ENVIRONMENT "${DD_TEST_ENV};NCCL_NVLS_ENABLE=0")
endfunction()
cmake_language(DEFER CALL _dd_gemm_test_env)

# the check's beta·C_in term (src/core/check.c: check_c_input) at 1 and 4 ranks
dd_check_test(unit_check_gemm_beta_term beta)
