# io_direct.cmake — the "direct" I/O path (io/io_direct.c): round trips
# against the independent path, the HDF5 fallback for chunked, compressed
# and big-endian datasets, refusals, and thread counts, at 1, 2 and 3 ranks.
# Included from tests/CMakeLists.txt, which provides dd_mpirun().
add_executable(test-io-direct ${PROJECT_SOURCE_DIR}/tests/unit/test_io_direct.c)
target_compile_options(test-io-direct PRIVATE ${DD_WARN})
target_link_libraries(test-io-direct PRIVATE dd_core)

set(_io_direct_tests "")
foreach(_n 1 2 3)
  dd_mpirun(_launch ${_n})
  foreach(_suite roundtrip fallback refuse threads)
    add_test(NAME io_direct_${_suite}_${_n}ranks
             COMMAND ${_launch} $<TARGET_FILE:test-io-direct> ${_suite})
    list(APPEND _io_direct_tests io_direct_${_suite}_${_n}ranks)
  endforeach()
endforeach()
# Open MPI refuses root without these (CI containers run as root); harmless elsewhere.
set_tests_properties(${_io_direct_tests} PROPERTIES LABELS io TIMEOUT 120
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")

# Benchmark (not a test): direct, independent and dd-like sequential
# pread/pwrite of the same bytes, in GB/s.
#   mpirun -np R io-bench [GiB] [directory]
add_executable(io-bench ${PROJECT_SOURCE_DIR}/tests/bench/io_bench.c)
target_link_libraries(io-bench PRIVATE dd_core)
target_compile_options(io-bench PRIVATE ${DD_WARN})
