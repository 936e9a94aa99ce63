/* 08_dmma — FP64 on the tensor cores: mma.sync m16n8k8 f64, fed by a
 * multi-stage cp.async pipeline through padded shared memory.  The
 * production FP64 kernel until 11_dmma_k16 (10_dmma_tma.cu), which keeps
 * its tiles and operand order (Hopper has no FP64 wgmma; DMMA through mma.sync
 * is its FP64 tensor path, 67 TFLOP/s on the datasheet against 34 for FP64
 * FMA on the CUDA cores).
 *
 * What it changes, against 07:
 *  - the multiply: a warp issues mma.sync.aligned.m16n8k8 (PTX ISA 7.8,
 *    sm_90), each 1024 FP64 multiply-adds, instead of 32 lanes' FMAs; the
 *    sm_80 m8n8k4 would need 4 instructions for the same work.
 *  - tiles: block 128×128, 8 warps of 64×32 (2 down, 4 across), 16 mma
 *    tiles = 64 accumulators per lane.  BK = 32, 3 stages of cp.async in
 *    flight (72.5 KB a stage, 217 KB in all, 1 block of 256 threads per SM).
 *  - roles swapped: the mma computes C^T = B^T·A^T.  Its A operand (16×8,
 *    four registers a lane) comes from B and its B operand (8×8, two
 *    registers) from A.  With k permuted inside each k8 step (the mma's
 *    logical k = t + 4v, t = lane%4, v = register, lives in shared column
 *    2t + v, for A and B alike: a bijection, the product is unchanged) and
 *    the 16 mma rows (= C columns) permuted to 2g + h, every operand is one
 *    or two 16-byte shared loads that land in the registers in the order
 *    the instruction reads them.  (Computing C = A·B directly needs the two
 *    halves of each 16-byte load in different operand slots: the compiler
 *    then spent ten register moves per mma, the first version's bottleneck.)
 *    Per k8 a warp issues 12 16-byte loads for 16 mma.
 *  - software pipeline: the fragments of k step s+1 are loaded while the
 *    mma of step s issue, across the stage boundary too: the barrier for
 *    the next stage comes before the last step's mma (CUTLASS's order).
 *  - padding instead of swizzling: A rows are BK+8 doubles (row stride ≡ 16
 *    banks, so the two rows of a quarter-warp's 16-byte loads take disjoint
 *    halves of the banks), B rows BN+2 (so the four k rows a quarter-warp
 *    reads land in four different 8-bank groups).
 *  - epilogue: each lane holds pairs of adjacent columns (16-byte stores,
 *    128 contiguous bytes per row across a warp); for a tile wholly inside
 *    C the beta-1 loads of C are all issued before the first add.
 *  - grouped block order as in 07.
 * Edges: cp.async with src-size 0 / 8 zero-fills rows and columns beyond
 * M, N, K, so the main loop has no special case; edge tiles take guarded
 * stores.  Misaligned A, B or C (odd ld, or a base not 16-byte aligned)
 * selects the instantiation with 8-byte copies and scalar stores.
 *
 * Why it should help: per SM the tensor cores do twice the FP64 work of
 * the FMA units, so the kernel is limited by feeding them: 128×128 tiles
 * cut global (L2) traffic to 16 flop per byte, the pipeline covers the L2
 * latency, and the shared-memory loads need about half of the bandwidth
 * the DMMA rate allows.  What is left: with 8 warps per SM (240 registers a
 * thread) the tensor pipe idles while a warp waits at the barrier, and the
 * beta-1 epilogue of a 1024-deep SUMMA panel is not overlapped with work.
 *
 * Measured on H200 (docs/results/h200-gemm-bench-2026-11-29.txt): 55.9 /
 * 52.0 / 51.8 TFLOP/s at n = 4096 / 8192 / 16384 = 90.7 / 91.2 / 97.0% of
 * cuBLAS DGEMM in the same run; SUMMA panels 8192²×1024 and 16384²×1024
 * (beta 1): 84.2% and 78.8%.  Registers: 255 a thread, 80 bytes of stack
 * (small spills, L1 hits).  Tuning history:
 * docs/results/h200-kernel-tuning-2026-11-29.md.
 */
#include "dmma_core.cuh"

/* Production: BK 32, 3 stages (217 KB of shared memory), fragments
 * double-buffered across k steps; chosen on the H200 against BK 16 with 4
 * stages, fragments loaded just before use, and blocks of 128×64
 * (docs/results/h200-kernel-tuning-2026-11-29.md). */
DD_LAUNCHER(dd_k08_dgemm, double, dd_dmma::launch_cfg<dd_dmma::Cfg<32, 3, 2, 4, true>>)
