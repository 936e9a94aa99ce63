# The CUDA engine's check and generator ops (absmax, matvec, fill_random:
# src/engine/engine_cuda_kernels.cu) against the CPU engine's and
# rng_fill_block, on the GPU (label gpu; exit 77, skipped, where no GPU is
# visible).
if(DD_HAVE_CUDA)
  add_executable(test-engine-aux-gpu ${PROJECT_SOURCE_DIR}/tests/gpu/test_engine_aux_gpu.c)
  target_link_libraries(test-engine-aux-gpu PRIVATE dd_core)
  target_compile_options(test-engine-aux-gpu PRIVATE ${DD_WARN})
  add_test(NAME gpu_engine_aux_check_and_generator_match_cpu COMMAND test-engine-aux-gpu)
  set_tests_properties(gpu_engine_aux_check_and_generator_match_cpu PROPERTIES
    LABELS gpu TIMEOUT 300 SKIP_RETURN_CODE ${DD_SKIP_CODE} RESOURCE_LOCK gpu
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endif()
