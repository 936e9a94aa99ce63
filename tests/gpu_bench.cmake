# GPU benchmarks: built with the kernels, never run by ctest (benches are not
# tests).  cublasxt-bench is the host-data cuBLASXt baseline that dgemm-dist's
# host-to-host runs are measured against (docs/design.md); it lands at the top
# of the build tree, where tests/gpu/run.sh looks for it.
if(TARGET dd_kernels)
  add_executable(cublasxt-bench ${PROJECT_SOURCE_DIR}/tests/gpu/cublasxt_bench.c)
  target_compile_options(cublasxt-bench PRIVATE ${DD_WARN})
  target_include_directories(cublasxt-bench PRIVATE ${PROJECT_SOURCE_DIR}/src/base ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(cublasxt-bench PRIVATE dd_base CUDA::cublas CUDA::cudart m)
  set_target_properties(cublasxt-bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
endif()
