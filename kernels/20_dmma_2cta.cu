/* 20_dmma_2cta — 13 (stream-K, bulk-add epilogue, TMA ring) cut into two
 * CTAs per SM: 128×64 tiles of 2 × 2 warps (the same 64×32 warp tiles and
 * registers), each CTA with its own ring of 4 stages (20b: 3).
 *
 * Why: Nsight Compute at 8192 and a fixed clock: cuBLAS's DGEMM runs 128
 * threads a block (246 registers, 73.7 KB of shared memory), two blocks per
 * SM, in 22.36 ms against 13's 23.40.  Two independent CTAs let one's
 * pipeline fill, epilogue and waits overlap the other's mma, where 13's
 * eight warps all wait on one ring.  Cost: 128×64 tiles read 50% more of
 * A and B from L2 per flop.
 *
 * The code is 10_dmma_tma.cu's, compiled with 2 warps across. */
#define DD_TMA_WARPS_N 2
#include "10_dmma_tma.cu"
