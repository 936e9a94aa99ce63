# GPU kernels against cuBLAS (label gpu).  kernel-test exits 77 where no GPU
# is present, which ctest reports as skipped, never as passed.
if(TARGET kernel-test)
  add_test(NAME gpu_kernels_match_cublas COMMAND kernel-test)
  set_tests_properties(gpu_kernels_match_cublas PROPERTIES
    LABELS gpu
    SKIP_RETURN_CODE ${DD_SKIP_CODE}
    TIMEOUT 900
    RESOURCE_LOCK gpu)
endif()
