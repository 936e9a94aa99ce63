# The HPL-style check (src/core/check.c): exact C passes, a wrong C fails,
# huge and tiny finite inputs neither overflow nor lie, NaN/Inf is "not
# meaningful" and fails, MPI reductions go in pieces below INT_MAX.  Each
# behaviour at 1 rank (grid 1x1) and 4 ranks (grid 2x2).
add_executable(test-check ${PROJECT_SOURCE_DIR}/tests/unit/test_check.c)
target_link_libraries(test-check PRIVATE dd_core)
target_compile_options(test-check PRIVATE ${DD_WARN})

set(DD_CHECK_TEST_ENV
  "OMPI_ALLOW_RUN_AS_ROOT=1" "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
  "OMPI_MCA_rmaps_base_oversubscribe=1" "OMPI_MCA_btl_vader_single_copy_mechanism=none")

# dd_check_test(NAME CASE) — test-check CASE at 1 and 4 ranks: NAME_1rank, NAME_4ranks
function(dd_check_test name case)
  foreach(ranks 1 4)
    if(ranks EQUAL 1)
      set(tname ${name}_1rank)
    else()
      set(tname ${name}_${ranks}ranks)
    endif()
    dd_mpirun(launch ${ranks})
    add_test(NAME ${tname} COMMAND ${launch} $<TARGET_FILE:test-check> ${case})
    set_tests_properties(${tname} PROPERTIES LABELS unit TIMEOUT 30 PROCESSORS ${ranks}
      ENVIRONMENT "${DD_CHECK_TEST_ENV}")
  endforeach()
endfunction()

dd_check_test(unit_check_passes_exact_c                  exact)
dd_check_test(unit_check_fails_finite_wrong_c            wrong)
dd_check_test(unit_check_huge_inputs_pass_exact_fail_wrong huge)
dd_check_test(unit_check_nan_inf_fails_not_meaningful    nonfinite)
dd_check_test(unit_check_allreduce_in_int_max_chunks     chunks)
dd_check_test(unit_check_line_format                     line)
