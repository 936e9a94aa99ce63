# GPU tests of dgemm-dist (label gpu): skipped (exit 77) where the GPUs they
# need are absent.  Each checks the CUDA backend's C against the serial
# product and against the CPU backend's C.
function(dd_gpu_case name gpus ranks m n k dtype)
  add_test(NAME ${name}
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/gpu/dist_case.sh ${gpus} ${ranks} ${m} ${n} ${k} ${dtype} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "gpu" TIMEOUT 300 SKIP_RETURN_CODE 77
    ENVIRONMENT "${DD_TEST_ENV};NCCL_NVLS_ENABLE=0" RESOURCE_LOCK gpu)
endfunction()

if(DD_HAVE_CUDA)
  # 1 GPU
  dd_gpu_case(gpu_1gpu_1x1_f64_odd          1 1 1000 1001 999 f64)
  dd_gpu_case(gpu_1gpu_1x1_f32_odd          1 1 1000 1001 999 f32)
  dd_gpu_case(gpu_1gpu_1x1_f64_small_panels 1 1 257 129 515 f64 --panel 64 --lookahead 2 --host-to-host)
  dd_gpu_case(gpu_1gpu_cublas_f64           1 1 333 444 555 f64 --kernel cublas)
  dd_gpu_case(gpu_1gpu_comm_mpi_f32         1 1 300 200 100 f32 --comm mpi)
  # 2 GPUs, NCCL
  dd_gpu_case(gpu_2gpu_1x2_nccl_f64         2 2 517 389 1031 f64 --grid 1x2 --comm nccl --panel 128)
  # the streamed host-to-host pass runs on zeroed blocks: a slice it missed fails the check
  dd_gpu_case(gpu_2gpu_2x1_nccl_h2h_f64     2 2 517 389 1031 f64 --grid 2x1 --comm nccl --panel 96 --host-to-host)
  dd_gpu_case(gpu_2gpu_1x2_mpi_h2h_f32      2 2 300 389 1031 f32 --grid 1x2 --comm mpi --panel 96 --host-to-host)
  dd_gpu_case(gpu_2gpu_4ranks_h2h_f64       2 4 301 277 219 f64 --grid 2x2 --comm mpi --panel 40 --host-to-host)
  dd_gpu_case(gpu_2gpu_2x1_nccl_f32         2 2 517 389 1031 f32 --grid 2x1 --comm nccl --panel 100)
  dd_gpu_case(gpu_2gpu_1x2_nccl_f32_la3     2 2 64 1000 700 f32 --grid 1x2 --comm nccl --panel 32 --lookahead 3)
  # 2 GPUs, MPI (staged on hosts whose MPI is not CUDA-aware)
  dd_gpu_case(gpu_2gpu_1x2_mpi_f64          2 2 517 389 1031 f64 --grid 1x2 --comm mpi --panel 128)
  dd_gpu_case(gpu_2gpu_2x1_mpi_f32          2 2 517 389 1031 f32 --grid 2x1 --comm mpi --panel 100)
  # four ranks sharing two GPUs: 2x2 grid, MPI comm
  dd_gpu_case(gpu_2gpu_4ranks_2x2_mpi_f64   2 4 601 577 419 f64 --grid 2x2 --comm mpi --panel 64)
  dd_gpu_case(gpu_2gpu_4ranks_auto_comm_f32 2 4 301 277 219 f32 --panel 50)

  # FP32 with no room for sgemm_dmma's FP64 copies: every multiply runs
  # sgemm_simt (FP32 arithmetic), the result checks, and the run says so
  dd_gpu_case(gpu_1gpu_f32_fallback_to_fp32_arithmetic 1 1 1000 1001 999 f32 --panel 200)
  set_property(TEST gpu_1gpu_f32_fallback_to_fp32_arithmetic APPEND PROPERTY ENVIRONMENT
    "DD_SGEMM_WORKSPACE_MIB=0"
    "DD_EXPECT_LOG=kernel sgemm_dmma: [0-9]+ of [0-9]+ multiplies ran on sgemm_simt")
  # an earlier kernel name is an alias: the run takes it and reports the kernel's name
  dd_gpu_case(gpu_1gpu_kernel_alias_reports_new_name 1 1 300 200 100 f64 --kernel 23_dmma_pipe)
  set_property(TEST gpu_1gpu_kernel_alias_reports_new_name APPEND PROPERTY ENVIRONMENT
    "DD_EXPECT_LOG=^kernel +dgemm_dmma$")

  add_test(NAME gpu_refusals_clear_messages COMMAND bash ${PROJECT_SOURCE_DIR}/tests/gpu/refusals.sh)
  set_tests_properties(gpu_refusals_clear_messages PROPERTIES LABELS "gpu" TIMEOUT 300
    SKIP_RETURN_CODE 77 ENVIRONMENT "${DD_TEST_ENV};NCCL_NVLS_ENABLE=0" RESOURCE_LOCK gpu)
endif()
