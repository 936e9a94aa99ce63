# The copy-engine comm backend (--comm ce, comm/comm_ce.c) on 2 GPUs of one
# host (label gpu; skipped, exit 77, without them): checked against the
# serial product and bit for bit against --comm nccl (tests/gpu/ce_case.sh).
function(dd_gpu_ce_case name ranks m n k dtype)
  add_test(NAME ${name}
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/gpu/ce_case.sh ${ranks} ${m} ${n} ${k} ${dtype} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "gpu" TIMEOUT 300 SKIP_RETURN_CODE 77
    ENVIRONMENT "${DD_TEST_ENV};NCCL_NVLS_ENABLE=0" RESOURCE_LOCK gpu)
endfunction()

if(DD_HAVE_CUDA AND DD_HAVE_NCCL)
  # A along the row (strided 2-D pulls from the root's block), odd sizes,
  # more panels than slots so every slot is reused (the ack handshake)
  dd_gpu_ce_case(gpu_2gpu_1x2_ce_f64         2 517 389 1031 f64 --grid 1x2 --panel 64)
  # B down the column (contiguous pulls), lookahead 3, FP32
  dd_gpu_ce_case(gpu_2gpu_2x1_ce_f32_la3     2 517 389 1031 f32 --grid 2x1 --panel 48 --lookahead 3)
  # panels streamed up behind the broadcast (the root's upload before its event)
  dd_gpu_ce_case(gpu_2gpu_1x2_ce_h2h_f64     2 300 389 1031 f64 --grid 1x2 --panel 96 --host-to-host)
  # four ranks on two GPUs, 2x2: both directions at once, two ranks per GPU
  dd_gpu_ce_case(gpu_2gpu_4ranks_2x2_ce_f64  4 301 277 219 f64 --grid 2x2 --panel 40)
endif()
