/* 09_dmma_occ — 08_dmma with twice the warps per SM: the same 128×128
 * block, BK 32 and 3-stage cp.async pipeline (kernels/dmma_core.cuh), cut
 * into 16 warp tiles of 32×32 instead of 8 of 64×32.
 *
 * The idea: Nsight Compute on 08 (docs/results/h200x2-2026-11-30-panels-checked)
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
 * Measured (H200, gemm-bench, docs/results/h200x2-2026-11-30-rung09): the
 * hypothesis is wrong.  09 runs at 67% / 67% / 74% of cuBLAS at n = 4096 /
 * 8192 / 16384 (08: 92 / 94 / 96%), 75% on the SUMMA panel shapes, and a
 * variant with 08's double-buffered fragments at 36–40% (384 bytes of
 * spills at 128 registers; dropped).  Why: what hides the DMMA latency is
 * the number of independent mma an SM has in flight, and that is set by
 * the accumulators an SM holds (one 128×128 tile: 16 mma per warp per k
 * step over 8 warps, or 8 over 16 warps: the same 128), not by the number
 * of warps; the smaller warp tile only adds fragment loads and spills.  A
 * faster FP64 kernel needs more accumulators per SM (a bigger tile in the
 * same registers: copies out of the consumer warps, TMA) or fewer
 * instructions per mma, not more warps.  Kept as the measured rung. */
#include "dmma_core.cuh"

DD_LAUNCHER(dd_k09_dgemm, double, dd_dmma::launch_cfg<dd_dmma::Cfg<32, 3, 4, 4, false, 32, 32>>)
