# The performance model (src/model): hand-computed cases of the rate
# interpolation, the broadcast and pipeline formulas, the memory figure
# against summa_work_bytes, and the auto-tuner against today's defaults on
# the H200 NVLink table (label unit); the calibration bench (not a test).
add_executable(test-model ${PROJECT_SOURCE_DIR}/tests/unit/test_model.c)
target_link_libraries(test-model PRIVATE dd_core)
target_compile_options(test-model PRIVATE ${DD_WARN})
add_test(NAME unit_model_rates_pipeline_memory_tuning COMMAND test-model)
set_tests_properties(unit_model_rates_pipeline_memory_tuning PROPERTIES LABELS unit TIMEOUT 30
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")

#   mpirun -np 1 model-calib --gemm ... ; mpirun -np P model-calib --bcast ...
add_executable(model-calib ${PROJECT_SOURCE_DIR}/tests/bench/model_calib.c)
target_link_libraries(model-calib PRIVATE dd_core)
target_compile_options(model-calib PRIVATE ${DD_WARN})

# dd-model: the model from the command line (predict; project for jobs/project)
add_executable(dd-model ${PROJECT_SOURCE_DIR}/tests/tools/dd_model.c)
target_link_libraries(dd-model PRIVATE dd_model)
# kernel.h: the production kernels' names (header only: no CUDA needed)
target_include_directories(dd-model PRIVATE ${PROJECT_SOURCE_DIR}/kernels)
target_compile_options(dd-model PRIVATE ${DD_WARN})
