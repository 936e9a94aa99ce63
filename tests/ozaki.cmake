# The Ozaki scheme II (issue 18): the host reference against exact integer
# products and a double-double reference, with the accuracy table per
# number of moduli (label unit, no GPU needed).  The GPU kernel ozaki2 is
# held to cuBLAS DGEMM and to the same reference in the ozaki_gpu tests
# (label gpu, skipped without a GPU).
add_executable(test-ozaki2 ${PROJECT_SOURCE_DIR}/tests/unit/test_ozaki2.c
  ${PROJECT_SOURCE_DIR}/kernels/ozaki2_ref.c)
target_include_directories(test-ozaki2 PRIVATE ${PROJECT_SOURCE_DIR}/kernels)
target_compile_options(test-ozaki2 PRIVATE ${DD_WARN})
target_link_libraries(test-ozaki2 PRIVATE m)
add_test(NAME unit_ozaki2_exact_accuracy_fallback COMMAND test-ozaki2)
set_tests_properties(unit_ozaki2_exact_accuracy_fallback PROPERTIES LABELS unit TIMEOUT 120)
