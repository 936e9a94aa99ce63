# The ScaLAPACK drop-in (libdgemm-dist-scalapack) against Debian's ScaLAPACK
# (libscalapack-openmpi-dev, tests/install-deps.sh): the oracle cases at 1,
# 2, 3, 4 and 6 ranks (every grid of 1x1..3x2 that fits, BLACS orders R and
# C, block sizes 1, 7, 64, transposes, alpha/beta, offsets, refusals), once
# with the exchange in rounds (DD_REDIST_LIMIT), the fallback to ScaLAPACK
# when dgemm-dist cannot start, and a plain ScaLAPACK program relinked
# against the drop-in.  Labels: scalapack, api.
find_library(SCALAPACK_LIBRARY NAMES scalapack-openmpi scalapack)
if(NOT SCALAPACK_LIBRARY)
  message(STATUS "ScaLAPACK not found: the scalapack tests report skipped (install libscalapack-openmpi-dev)")
  add_test(NAME scalapack_not_found COMMAND ${CMAKE_COMMAND} -E echo "ScaLAPACK not found")
  set_tests_properties(scalapack_not_found PROPERTIES LABELS "scalapack;api"
    PASS_REGULAR_EXPRESSION "never" SKIP_REGULAR_EXPRESSION "not found")
  return()
endif()
get_filename_component(_dd_sl_real ${SCALAPACK_LIBRARY} REALPATH)

set(DD_SL_ENV
  "OMPI_ALLOW_RUN_AS_ROOT=1" "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
  "OMPI_MCA_rmaps_base_oversubscribe=1" "OMPI_MCA_btl_vader_single_copy_mechanism=none"
  "OPENBLAS_NUM_THREADS=1")

# the drop-in first, ScaLAPACK after: pdgemm_ is dgemm-dist's
add_executable(test-pdgemm ${PROJECT_SOURCE_DIR}/tests/scalapack/test_pdgemm.c)
target_link_libraries(test-pdgemm PRIVATE dgemm_dist_scalapack_shared ${SCALAPACK_LIBRARY} MPI::MPI_C m ${CMAKE_DL_LIBS})
target_compile_definitions(test-pdgemm PRIVATE DD_SCALAPACK_LIB="${_dd_sl_real}")
target_compile_options(test-pdgemm PRIVATE ${DD_WARN})

foreach(n 1 2 3 4 6)
  dd_mpirun(_run ${n})
  add_test(NAME scalapack_oracle_${n}rank COMMAND ${_run} $<TARGET_FILE:test-pdgemm>)
  set_tests_properties(scalapack_oracle_${n}rank PROPERTIES PROCESSORS ${n} TIMEOUT 60
    LABELS "scalapack;api;mpi" ENVIRONMENT "${DD_SL_ENV}" PASS_REGULAR_EXPRESSION "all passed")
endforeach()
dd_mpirun(_run 4)
add_test(NAME scalapack_oracle_exchange_rounds_4rank COMMAND ${_run} $<TARGET_FILE:test-pdgemm>)
set_tests_properties(scalapack_oracle_exchange_rounds_4rank PROPERTIES PROCESSORS 4 TIMEOUT 60
  LABELS "scalapack;api;mpi" ENVIRONMENT "${DD_SL_ENV};DD_REDIST_LIMIT=37"
  PASS_REGULAR_EXPRESSION "all passed")
add_test(NAME scalapack_fallback_to_scalapack_4rank COMMAND ${_run} $<TARGET_FILE:test-pdgemm> fallback)
set_tests_properties(scalapack_fallback_to_scalapack_4rank PROPERTIES PROCESSORS 4 TIMEOUT 60
  LABELS "scalapack;api;mpi" ENVIRONMENT "${DD_SL_ENV};DD_SCALAPACK_BACKEND=abacus"
  PASS_REGULAR_EXPRESSION "handed to the ScaLAPACK routine.*all passed|all passed")

# the benchmark (not a test): the drop-in against ScaLAPACK's pdgemm_
# (tests/bench/pdgemm_bench.c; docs/results/cpu-pdgemm-2026-11-30)
add_executable(pdgemm-bench ${PROJECT_SOURCE_DIR}/tests/bench/pdgemm_bench.c)
target_link_libraries(pdgemm-bench PRIVATE dgemm_dist_scalapack_shared ${SCALAPACK_LIBRARY} MPI::MPI_C m ${CMAKE_DL_LIBS})
target_compile_definitions(pdgemm-bench PRIVATE DD_SCALAPACK_LIB="${_dd_sl_real}")
target_compile_options(pdgemm-bench PRIVATE ${DD_WARN})
set_target_properties(pdgemm-bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

# The drop-in's refusals against PBLAS's own numbers (ScaLAPACK's pdgemm_
# with PB_Cabort defined by the test, tests/scalapack/test_pdgemm_faults.c):
# invalid, released and foreign BLACS contexts in each descriptor, every
# descriptor entry and scalar argument (and dd_pgemm's numbers), processes
# outside a valid grid returning silently, replicated operands and DTYPE_ 2
# handed to ScaLAPACK, the message's form; at 1 and 4 ranks.
add_executable(test-pdgemm-faults ${PROJECT_SOURCE_DIR}/tests/scalapack/test_pdgemm_faults.c)
target_link_libraries(test-pdgemm-faults PRIVATE dgemm_dist_scalapack_shared ${SCALAPACK_LIBRARY} MPI::MPI_C m ${CMAKE_DL_LIBS})
target_compile_definitions(test-pdgemm-faults PRIVATE DD_SCALAPACK_LIB="${_dd_sl_real}")
target_compile_options(test-pdgemm-faults PRIVATE ${DD_WARN})
foreach(n 1 4)
  dd_mpirun(_run ${n})
  add_test(NAME scalapack_faults_pblas_numbers_${n}rank COMMAND ${_run} $<TARGET_FILE:test-pdgemm-faults>)
  set_tests_properties(scalapack_faults_pblas_numbers_${n}rank PROPERTIES PROCESSORS ${n} TIMEOUT 60
    LABELS "scalapack;api;mpi" ENVIRONMENT "${DD_SL_ENV}" PASS_REGULAR_EXPRESSION "all passed")
endforeach()
