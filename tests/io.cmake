# io.cmake — the HDF5 I/O layer (io/): round trips through every available
# path, input probing and the output-file discipline, at 1, 2 and 3 ranks.
# Included from tests/CMakeLists.txt, which provides dd_mpirun().
add_executable(test-io ${PROJECT_SOURCE_DIR}/tests/unit/test_io.c)
target_compile_options(test-io PRIVATE ${DD_WARN})
target_link_libraries(test-io PRIVATE dd_core)

set(_io_paths independent)
if(HDF5_IS_PARALLEL)
  list(APPEND _io_paths collective)
endif()

set(_io_tests "")
foreach(_n 1 2 3)
  dd_mpirun(_launch ${_n})
  foreach(_path ${_io_paths})
    add_test(NAME io_roundtrip_${_path}_${_n}ranks
             COMMAND ${_launch} $<TARGET_FILE:test-io> roundtrip ${_path})
    list(APPEND _io_tests io_roundtrip_${_path}_${_n}ranks)
  endforeach()
  add_test(NAME io_probe_${_n}ranks COMMAND ${_launch} $<TARGET_FILE:test-io> probe)
  add_test(NAME io_output_${_n}ranks COMMAND ${_launch} $<TARGET_FILE:test-io> output)
  list(APPEND _io_tests io_probe_${_n}ranks io_output_${_n}ranks)
endforeach()
# Open MPI refuses root without these (CI containers run as root); harmless elsewhere.
set_tests_properties(${_io_tests} PROPERTIES LABELS io TIMEOUT 60
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
