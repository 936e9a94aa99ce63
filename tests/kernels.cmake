# The kernels' layout, without a GPU (label unit): kernels.def's files,
# names and aliases, the ladder's rungs one self-contained file each in
# kernels/ladder/, production including nothing of the ladder, and the
# model's rate tables naming production kernels only
# (kernels/check_layout.cmake says what it checks).
add_test(NAME unit_kernels_layout
  COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR} -P ${PROJECT_SOURCE_DIR}/kernels/check_layout.cmake)
set_tests_properties(unit_kernels_layout PROPERTIES LABELS unit TIMEOUT 60)

# kernels/README.md's table generator (kernels/ladder_table.py) on the
# ladder run of 2026-11-29: it prints that run's rows as recorded (the
# rungs under their names, cuBLAS last), and refuses records of two runs.
set(dd_lt ${PROJECT_SOURCE_DIR}/kernels/ladder_table.py)
set(dd_lt_in ${PROJECT_SOURCE_DIR}/docs/results/h200-gemm-bench-2026-11-29/h200-gemm-bench-2026-11-29.jsonl)
add_test(NAME unit_kernels_ladder_table COMMAND bash -c "set -e
  out=$(timeout 30 python3 ${dd_lt} ${dd_lt_in})
  for row in '| 01_naive | 0.50 | 1.0% | 0.49 | 0.8% |' '| 07_warptile | 44.80 | 91.4% | 23.15 | 37.6% |' \
             '| 08_dmma | — | — | 55.87 | 90.7% |' '| cublas | 49.03 | 100% | 61.58 | 100% |'; do
    grep -Fxq \"$row\" <<<\"$out\" || { echo \"missing: $row\"; echo \"$out\"; exit 1; }
  done
  [ \"$(grep -c '^| [0-9a-z]' <<<\"$out\")\" = 10 ] || { echo \"$out\"; exit 1; }
  two=$(mktemp); trap 'rm -f $two' EXIT
  cat ${dd_lt_in} ${PROJECT_SOURCE_DIR}/docs/results/h200-2026-12-01-pipe/rows/rows.jsonl >$two
  if timeout 30 python3 ${dd_lt} $two; then echo 'two runs accepted'; exit 1; fi")
set_tests_properties(unit_kernels_ladder_table PROPERTIES LABELS unit TIMEOUT 60)

# GPU kernels against cuBLAS (label gpu).  kernel-test exits 77 where no GPU
# is present, which ctest reports as skipped, never as passed.  It shares
# gemm_check.cuh with gemm-bench (the check's threshold from src/base's dd.h,
# splitmix64 from dd_splitmix.h) and lands in the kernels' build directory,
# beside gemm-bench.
if(TARGET dd_kernels)
  add_executable(kernel-test ${PROJECT_SOURCE_DIR}/tests/gpu/test_kernels.cu)
  set_target_properties(kernel-test PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/kernels)
  target_compile_options(kernel-test PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:-lineinfo;-Xcompiler=-Wall,-Wextra>")
  target_include_directories(kernel-test PRIVATE ${PROJECT_SOURCE_DIR}/src/base ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(kernel-test PRIVATE dd_kernels)
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
