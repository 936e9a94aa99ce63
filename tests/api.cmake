# The library (include/dgemm_dist.h): its rules and refusals (test-api, at
# 1 and 4 ranks), and the install as a client sees it: the build installed
# into a prefix in the build tree, examples/ built there with
# find_package(dgemm-dist) alone, run at 1, 2 and 4 ranks (and against the
# static library), and compiled once with pkg-config alone.  Label: api.
set(DD_API_ENV
  "OMPI_ALLOW_RUN_AS_ROOT=1" "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
  "OMPI_MCA_rmaps_base_oversubscribe=1" "OMPI_MCA_btl_vader_single_copy_mechanism=none"
  "OPENBLAS_NUM_THREADS=1")
string(JOIN " " _dd_api_mpirun ${MPIEXEC_EXE} ${DD_MPIRUN_FLAGS})

add_executable(test-api ${PROJECT_SOURCE_DIR}/tests/api/test_api.c)
# the public header and the shared library; grid_block (dd_base, static)
# to hold dd_block_range against
target_link_libraries(test-api PRIVATE dgemm_dist_shared dd_base)
target_compile_options(test-api PRIVATE ${DD_WARN})
foreach(n 1 4)
  dd_mpirun(_run ${n})
  add_test(NAME api_rules_and_refusals_${n}rank COMMAND ${_run} $<TARGET_FILE:test-api>)
  set_tests_properties(api_rules_and_refusals_${n}rank PROPERTIES
    LABELS "api;mpi" TIMEOUT 30 PROCESSORS ${n} ENVIRONMENT "${DD_API_ENV}")
endforeach()

# plans (dd_plan_*): streams, passes, the check, refusals, at 1, 3 and 4 ranks
add_executable(test-plan ${PROJECT_SOURCE_DIR}/tests/api/test_plan.c)
target_link_libraries(test-plan PRIVATE dgemm_dist_shared dd_base m)
target_compile_options(test-plan PRIVATE ${DD_WARN})
foreach(n 1 3 4)
  dd_mpirun(_run ${n})
  add_test(NAME api_plan_streams_passes_refusals_${n}rank COMMAND ${_run} $<TARGET_FILE:test-plan>)
  set_tests_properties(api_plan_streams_passes_refusals_${n}rank PROPERTIES
    LABELS "api;mpi" TIMEOUT 40 PROCESSORS ${n} ENVIRONMENT "${DD_API_ENV}")
endforeach()

set(_dd_api_work ${CMAKE_BINARY_DIR}/api-install)
set(_dd_api_sh ${PROJECT_SOURCE_DIR}/tests/api/example.sh)
add_test(NAME api_install_and_build_example
  COMMAND bash ${_dd_api_sh} install ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR} ${_dd_api_work})
set_tests_properties(api_install_and_build_example PROPERTIES
  LABELS api TIMEOUT 60 FIXTURES_SETUP dd_api_installed RESOURCE_LOCK dd_api_install)
foreach(n 1 2 4)
  add_test(NAME api_example_find_package_${n}rank
    COMMAND bash ${_dd_api_sh} run ${_dd_api_work} ${n})
  set_tests_properties(api_example_find_package_${n}rank PROPERTIES PROCESSORS ${n})
  list(APPEND _dd_api_runs api_example_find_package_${n}rank)
endforeach()
add_test(NAME api_example_static_2rank COMMAND bash ${_dd_api_sh} run ${_dd_api_work} 2 static)
add_test(NAME api_example_plan_stream_3rank COMMAND bash ${_dd_api_sh} run ${_dd_api_work} 3 plan)
add_test(NAME api_example_pkg_config_2rank
  COMMAND bash ${_dd_api_sh} pkgconfig ${PROJECT_SOURCE_DIR} ${_dd_api_work})
list(APPEND _dd_api_runs api_example_static_2rank api_example_plan_stream_3rank
  api_example_pkg_config_2rank)
# the plain ScaLAPACK program of examples/, relinked against the installed drop-in
find_library(SCALAPACK_LIBRARY NAMES scalapack-openmpi scalapack)
if(SCALAPACK_LIBRARY)
  add_test(NAME scalapack_relink_installed_4rank COMMAND bash ${_dd_api_sh} relink ${_dd_api_work} 4)
  set_tests_properties(scalapack_relink_installed_4rank PROPERTIES PROCESSORS 4 LABELS "api;scalapack"
    TIMEOUT 30 FIXTURES_REQUIRED dd_api_installed ENVIRONMENT "${DD_API_ENV};DD_MPIRUN=${_dd_api_mpirun}")
endif()
set_tests_properties(${_dd_api_runs} PROPERTIES LABELS api TIMEOUT 30
  FIXTURES_REQUIRED dd_api_installed ENVIRONMENT "${DD_API_ENV};DD_MPIRUN=${_dd_api_mpirun}")

# What the install exports: each library's defined globals, static and
# shared, are its list (cmake/dgemm-dist.syms, cmake/dgemm-dist-scalapack.syms)
# exactly, each name declared in its own library's installed headers, and
# every installed header compiles on its own.
add_test(NAME api_installed_symbols_are_the_public_list
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/api/symbols.sh ${_dd_api_work}/prefix ${PROJECT_SOURCE_DIR})
set_tests_properties(api_installed_symbols_are_the_public_list PROPERTIES LABELS api TIMEOUT 60
  FIXTURES_REQUIRED dd_api_installed)
# The layering rule where the build alone would not show it (base and core
# see none of include/, src/abi's leaves include nothing) and one version
# number, project(VERSION)'s, in the program's --version, record and files.
add_test(NAME api_layering_and_one_version
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/api/layering.sh ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}
    ${PROJECT_VERSION} "$<TARGET_PROPERTY:dd_base,INTERFACE_INCLUDE_DIRECTORIES>"
    "$<TARGET_PROPERTY:dd_mult,INTERFACE_INCLUDE_DIRECTORIES>")
set_tests_properties(api_layering_and_one_version PROPERTIES LABELS "api;cli" TIMEOUT 60
  ENVIRONMENT "${DD_API_ENV};DD_BIN=$<TARGET_FILE:dgemm-dist>;DD_COMPARE=$<TARGET_FILE:dd-compare>")

# The device-pointer entries on real GPU memory (label gpu: skipped, exit
# 77, where a rank sees no GPU): 1 rank, and 2 ranks on 2 GPUs; plans on
# the CUDA backend likewise.
if(DD_HAVE_CUDA)
  foreach(n 1 2)
    dd_mpirun(_run ${n})
    add_test(NAME gpu_api_plan_${n}rank COMMAND ${_run} $<TARGET_FILE:test-plan>)
    set_tests_properties(gpu_api_plan_${n}rank PROPERTIES LABELS "gpu;api" TIMEOUT 120
      PROCESSORS ${n} SKIP_RETURN_CODE 77 RESOURCE_LOCK gpu
      ENVIRONMENT "${DD_API_ENV};DD_TEST_BACKEND=cuda")
  endforeach()
  add_executable(test-api-device ${PROJECT_SOURCE_DIR}/tests/gpu/test_api_device.c)
  target_link_libraries(test-api-device PRIVATE dgemm_dist_shared CUDA::cudart m)
  target_compile_options(test-api-device PRIVATE ${DD_WARN})
  foreach(n 1 2)
    dd_mpirun(_run ${n})
    add_test(NAME gpu_api_device_pointers_${n}rank COMMAND ${_run} $<TARGET_FILE:test-api-device>)
    set_tests_properties(gpu_api_device_pointers_${n}rank PROPERTIES
      LABELS "gpu;api" TIMEOUT 120 PROCESSORS ${n} SKIP_RETURN_CODE 77 RESOURCE_LOCK gpu
      ENVIRONMENT "${DD_API_ENV};NCCL_NVLS_ENABLE=0" PASS_REGULAR_EXPRESSION "all passed"
      SKIP_REGULAR_EXPRESSION "SKIP:")
  endforeach()
endif()

# The library under misuse (dgemm_dist.h, "What the library promises"):
# bounds compared without overflow (offsets near 2^63, leading dimensions
# past 2^63 bytes), ranks that pass different arguments or options, NULL
# given to every public entry, dd_context_destroy after MPI_Finalize.  Each
# at 1 rank and at ranks that can disagree; a hang is the TIMEOUT.
foreach(_t bounds agree null finalize)
  add_executable(test-api-${_t} ${PROJECT_SOURCE_DIR}/tests/api/test_${_t}.c)
  target_link_libraries(test-api-${_t} PRIVATE dgemm_dist_shared dd_base m)
  target_compile_options(test-api-${_t} PRIVATE ${DD_WARN})
endforeach()
foreach(_case "bounds;1;2;4" "agree;1;2;3" "null;1;2;3" "finalize;1;2")
  list(POP_FRONT _case _t)
  foreach(n ${_case})
    dd_mpirun(_run ${n})
    add_test(NAME api_misuse_${_t}_${n}rank COMMAND ${_run} $<TARGET_FILE:test-api-${_t}>)
    set_tests_properties(api_misuse_${_t}_${n}rank PROPERTIES
      LABELS "api;mpi" TIMEOUT 30 PROCESSORS ${n} ENVIRONMENT "${DD_API_ENV}"
      FAIL_REGULAR_EXPRESSION "FAILED")
  endforeach()
endforeach()

# Every entry (dd_gemm, dd_gemm_device, dd_pgemm in place and through the
# redistribution, a streamed plan) on a generated table of shapes (each of
# M, N, K in {1, 2, 3, 7}), transa and transb in {N, T, C}, beta 0 on a
# NaN C and beta 2, against the exact product, the check on half the
# calls; on the GPU at 1 and 2 ranks.
add_executable(test-ops-sweep ${PROJECT_SOURCE_DIR}/tests/api/test_ops_sweep.c)
target_link_libraries(test-ops-sweep PRIVATE dgemm_dist_shared dd_base m)
target_compile_options(test-ops-sweep PRIVATE ${DD_WARN})
foreach(n 1 2 4)
  dd_mpirun(_run ${n})
  add_test(NAME api_ops_sweep_every_entry_${n}rank COMMAND ${_run} $<TARGET_FILE:test-ops-sweep>)
  set_tests_properties(api_ops_sweep_every_entry_${n}rank PROPERTIES
    LABELS "api;mpi" TIMEOUT 60 PROCESSORS ${n} ENVIRONMENT "${DD_API_ENV}"
    PASS_REGULAR_EXPRESSION " 0 failed assertions")
endforeach()
foreach(n 1 2)
  if(NOT DD_HAVE_CUDA)
    break()
  endif()
  dd_mpirun(_run ${n})
  add_test(NAME gpu_api_ops_sweep_every_entry_${n}rank COMMAND ${_run} $<TARGET_FILE:test-ops-sweep>)
  set_tests_properties(gpu_api_ops_sweep_every_entry_${n}rank PROPERTIES
    LABELS "gpu;api" TIMEOUT 180 PROCESSORS ${n} SKIP_RETURN_CODE 77 RESOURCE_LOCK gpu
    ENVIRONMENT "${DD_API_ENV};NCCL_NVLS_ENABLE=0;DD_SWEEP_BACKEND=cuda"
    PASS_REGULAR_EXPRESSION " 0 failed assertions" SKIP_REGULAR_EXPRESSION "SKIP:")
endforeach()
# The check sees the caller's operands: op(A) doubled on its way into work
# memory (DD_FAULT=misload) leaves C consistent with the work blocks, and
# the check must still FAIL, naming op(A).
foreach(n 1 3)
  dd_mpirun(_run ${n})
  add_test(NAME api_check_sees_caller_operands_${n}rank
    COMMAND ${_run} $<TARGET_FILE:test-ops-sweep> misload)
  set_tests_properties(api_check_sees_caller_operands_${n}rank PROPERTIES
    LABELS "api;mpi" TIMEOUT 30 PROCESSORS ${n} ENVIRONMENT "${DD_API_ENV};DD_FAULT=misload:*"
    PASS_REGULAR_EXPRESSION " 0 failed assertions")
endforeach()
# beta = 0: C's input is never read, shown on C's pages (PROT_NONE, reads
# told from writes by the fault's error code) for dd_gemm and dd_pgemm on
# both paths; beta = 1 shows the detector sees reads.
add_executable(test-beta0 ${PROJECT_SOURCE_DIR}/tests/api/test_beta0.c)
target_link_libraries(test-beta0 PRIVATE dgemm_dist_shared dd_base m)
target_compile_options(test-beta0 PRIVATE ${DD_WARN})
foreach(n 1 4)
  dd_mpirun(_run ${n})
  add_test(NAME api_beta0_never_reads_c_${n}rank COMMAND ${_run} $<TARGET_FILE:test-beta0>)
  set_tests_properties(api_beta0_never_reads_c_${n}rank PROPERTIES
    LABELS "api;mpi" TIMEOUT 30 PROCESSORS ${n} ENVIRONMENT "${DD_API_ENV}" SKIP_RETURN_CODE 77
    PASS_REGULAR_EXPRESSION " 0 failed assertions")
endforeach()
