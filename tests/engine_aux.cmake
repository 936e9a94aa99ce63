# The engine ops behind the check and --size generation (absmax, matvec,
# fill_random: engine.h) on the CPU engine, against plain loops and
# rng_fill_block.  The CUDA engine's are held to these in tests/gpu_aux.cmake.
add_executable(test-engine-aux ${PROJECT_SOURCE_DIR}/tests/unit/test_engine_aux.c)
target_link_libraries(test-engine-aux PRIVATE dd_core)
target_compile_options(test-engine-aux PRIVATE ${DD_WARN})
add_test(NAME unit_engine_aux_absmax_matvec_fill_random COMMAND test-engine-aux)
set_tests_properties(unit_engine_aux_absmax_matvec_fill_random PROPERTIES LABELS unit TIMEOUT 60
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
