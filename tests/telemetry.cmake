# GPU telemetry (src/base/telemetry.c): NVML opened at run time.  On a CPU
# machine it must say "not available" and pass; on a GPU host (label gpu:
# run by tests/gpu/run.sh's test stage) it measures.
add_executable(test-telemetry ${PROJECT_SOURCE_DIR}/tests/unit/test_telemetry.c)
target_link_libraries(test-telemetry PRIVATE dd_base)
target_compile_options(test-telemetry PRIVATE ${DD_WARN})
add_test(NAME unit_telemetry_nvml_or_not_available COMMAND test-telemetry)
set_tests_properties(unit_telemetry_nvml_or_not_available PROPERTIES LABELS "unit;gpu" TIMEOUT 20)
