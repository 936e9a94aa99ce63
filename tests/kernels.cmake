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

# ozaki2's own INT8 GEMM (kernels/i8gemm.cu) against cuBLAS's INT8 GEMM,
# exactly, INT32 and fused-residue outputs: edge tiles in m, n and k (k not a
# multiple of the 128-byte step, rows padded past k with random bytes that
# must not be read), three products per call, one k past 2^16.  Skipped
# without a GPU; rows say "skipped" on GPUs other than compute 9.0.
if(TARGET gemm-bench)
  add_test(NAME gpu_i8gemm_matches_cublas
    COMMAND gemm-bench --types i8 --i8-batch 3 --reps 1 --warmup 0
      --sizes 1x1x1,129x257x129,300x700x1000,1000x517x4111,2048,256x512x70000)
  set_tests_properties(gpu_i8gemm_matches_cublas PROPERTIES
    LABELS gpu SKIP_RETURN_CODE ${DD_SKIP_CODE} TIMEOUT 300 RESOURCE_LOCK gpu)
endif()
