# The Ozaki scheme II (issue 18): the host reference against exact integer
# products and a double-double reference, with the accuracy table per
# number of moduli (label unit, no GPU needed).  The GPU kernel ozaki2 is
# held to cuBLAS DGEMM and to the same reference in the ozaki_gpu tests
# (label gpu, skipped without a GPU).
add_executable(test-ozaki2 ${PROJECT_SOURCE_DIR}/tests/unit/test_ozaki2.c
  ${PROJECT_SOURCE_DIR}/kernels/ozaki2_ref.c)
target_include_directories(test-ozaki2 PRIVATE ${PROJECT_SOURCE_DIR}/kernels)
target_compile_options(test-ozaki2 PRIVATE ${DD_WARN})
target_link_libraries(test-ozaki2 PRIVATE dd_base MPI::MPI_C m)
add_test(NAME unit_ozaki2_exact_accuracy_fallback COMMAND test-ozaki2)
set_tests_properties(unit_ozaki2_exact_accuracy_fallback PROPERTIES LABELS unit TIMEOUT 120)

# GPU: ozaki-bench --test (ozaki2 against native cuBLAS and the double-double
# reference at n = 1024 and 2048 on four input classes, the range check's
# fallback); dgemm-dist --kernel ozaki2 on 1 and 2 GPUs against the serial
# product (dist_case.sh), and --size 4096 --check, which must print PASSED.
if(TARGET dd_kernels)
  add_executable(ozaki-bench ${PROJECT_SOURCE_DIR}/tests/gpu/ozaki_bench.cu)
  set_target_properties(ozaki-bench PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
  target_compile_options(ozaki-bench PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
  target_include_directories(ozaki-bench PRIVATE ${PROJECT_SOURCE_DIR}/src/base ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(ozaki-bench PRIVATE dd_kernels)
  add_test(NAME gpu_ozaki2_vs_cublas_and_dd COMMAND ozaki-bench --test)
  set_tests_properties(gpu_ozaki2_vs_cublas_and_dd PROPERTIES LABELS gpu
    SKIP_RETURN_CODE ${DD_SKIP_CODE} TIMEOUT 600 RESOURCE_LOCK gpu)
  # the same with cuBLAS's INT8 GEMM in place of the own one (i8gemm.cu)
  add_test(NAME gpu_ozaki2_cublas_int8 COMMAND ozaki-bench --test)
  set_tests_properties(gpu_ozaki2_cublas_int8 PROPERTIES LABELS gpu ENVIRONMENT DD_OZAKI2_INT8=cublas
    SKIP_RETURN_CODE ${DD_SKIP_CODE} TIMEOUT 600 RESOURCE_LOCK gpu)
  dd_gpu_case(gpu_1gpu_ozaki2_f64 1 1 1000 1001 999 f64 --kernel ozaki2)
  dd_gpu_case(gpu_2gpu_1x2_nccl_ozaki2_f64 2 2 517 389 1031 f64 --grid 1x2 --comm nccl --panel 128
    --kernel ozaki2)
  add_test(NAME gpu_ozaki2_dgemm_dist_4096
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/gpu/ozaki_dist.sh 4096)
  set_tests_properties(gpu_ozaki2_dgemm_dist_4096 PROPERTIES LABELS gpu TIMEOUT 300
    SKIP_RETURN_CODE 77 ENVIRONMENT "${DD_TEST_ENV};NCCL_NVLS_ENABLE=0" RESOURCE_LOCK gpu)
endif()
