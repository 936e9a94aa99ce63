/* 09_dmma_occ — 08_dmma with twice the warps per SM: the same 128×128
 * block, BK 32 and 3-stage cp.async pipeline (kernels/dmma_core.cuh), cut
 * into 16 warp tiles of 32×32 instead of 8 of 64×32.
 *
 * Why: Nsight Compute on 08 (docs/results/h200x2-2026-11-30-panels-checked)
 * finds the FP64 tensor pipe at 89% and every warp stalled mostly on the
 * fixed latency of its own DMMA chain (40% of its stall cycles) or on the
 * pipe (36%), with only 8 warps per SM because 64 accumulators and
 * double-buffered fragments take 255 registers a thread (and spill).  A
 * 32×32 warp tile holds 32 accumulators a lane: 16 warps fit in the
 * register file at 128 registers a thread, so while one warp waits on its
 * DMMA another issues.  The price: each warp loads its fragments for half
 * the mma (8 16-byte shared loads per 8 mma against 12 per 16), a third
 * more shared-memory traffic, which ncu put at 40% of its peak in 08.
 *
 * Two entries: 09_dmma_w16 loads each k step's fragments just before its
 * mma (fewer registers); 09_dmma_w16p double-buffers them across k steps as
 * 08 does (more latency hidden per warp, at the risk of spills at 128
 * registers).  FP64 only; measured in docs/results (gemm-bench). */
#include "dmma_core.cuh"

DD_LAUNCHER(dd_k09_dgemm, double, dd_dmma::launch_cfg<dd_dmma::Cfg<32, 3, 4, 4, false, 32, 32>>)
DD_LAUNCHER(dd_k09p_dgemm, double, dd_dmma::launch_cfg<dd_dmma::Cfg<32, 3, 4, 4, true, 32, 32>>)
