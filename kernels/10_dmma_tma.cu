/* 10_dmma_tma — 08's FP64 tensor-core multiply fed by the Tensor Memory
 * Accelerator from a producer warp, the consumer warps doing nothing but
 * shared-memory fragment loads and mma.
 *
 * What it changes, against 08 (which ncu found with its DMMA pipe at 89%,
 * 255 registers a thread and spills, every warp also computing cp.async
 * addresses and waiting at a block barrier per tile):
 *  - copies: per stage one TMA box of A (128 rows × 16
 *    doubles) and eight of B (16 k-rows × 16 columns each) into a 6-stage
 *    ring, 4 tiles ahead; mbarriers with transaction counts say when a
 *    stage has landed (full) and when the 8 warps are done with it (empty).
 *    No block barrier in the main loop, no copy addressing and no edge
 *    masks (the TMA zero-fills past M, N and K).  A dedicated producer warp
 *    would cost registers: with 9 warps an SM sub-partition holds 3 of
 *    them and ptxas caps a thread at 168 registers (setmaxnreg, which
 *    would move them, exists only in sm_90a); so lane 0 of each of the 8
 *    warps in turn issues a tile's copies, refilling the slot of the tile
 *    two steps back (thread 0 alone made its warp lag the others: 83-90%
 *    of cuBLAS).  Each warp releases a stage with one arrival (lane 0 after
 *    __syncwarp; one per thread measured the same).
 *  - layout: the TMA's 128-byte swizzle instead of padding (16-byte chunk
 *    c of row r stored at c ^ (r mod 8)).  B's fragment loads (k rows 2t
 *    and 2t+1, columns 2g, 2g+1) then hit 8 different chunks per quarter
 *    warp.  A's would hit rows g = 0, 1 with the same chunk sets, so mma
 *    column g reads shared row σ(g) = (g >> 1) | (g & 1) << 2: rows 0 and 4
 *    in one quarter warp, XOR patterns apart in bit 2, conflict-free.  The
 *    C rows follow: c0/c2 are row t of an 8-row slice, c1/c3 row t + 4.
 *  - the rest is 08's: block 128×128, 8 warps of 64×32, mma.m16n8k8 on
 *    C^T = B^T·A^T with k permuted so every operand is one 16-byte load in
 *    register order, grouped block order, the same epilogue (store_acc).
 *  - 256 threads, up to 255 registers a thread, as 08.
 * Needs compute capability 9.x and A, B with 16-byte aligned bases and even
 * leading dimensions (TMA strides are multiples of 16 bytes); otherwise it
 * runs 08.
 *
 * 12 adds the beta-1 epilogue through shared memory (bulk FP64 adds at
 * L2), 13 stream-K for the last wave.  23_dmma_pipe (the FP64 production
 * kernel) is 13 with its main loop software-pipelined across stages
 * (mainloop_pipe): 13 loads a whole stage's fragments, then issues its 16
 * mma, so each warp's mma stop while it reloads, and the two warps of an SM
 * sub-partition tend to reload together (Nsight Compute, base clock: 7.0
 * cycles of fixed-latency waits per issued instruction against cuBLAS's
 * 4.0, 23.3 ms against 22.4 at n = 8192).  23 reloads each fragment six
 * mma after its last read instead: 22.4 ms (cuBLAS's time), waits 5.2,
 * and 12.6 J per TFLOP against 13's 13.3 under the 700 W cap
 * (docs/results/h200-2026-12-01-pipe).
 *
 * Measured: see kernels/README.md (the ladder) and docs/results. */
#include "dmma_tma.cuh"

DD_LAUNCHER(dd_k10_dgemm, double, launch10<false>)
DD_LAUNCHER(dd_k11_dgemm, double, launch10<true>)
DD_LAUNCHER(dd_k12_dgemm, double, launch12<false>)
DD_LAUNCHER(dd_k13_dgemm, double, launch12<true>)
DD_LAUNCHER(dd_k23_dgemm, double, launch12<true, 6, 4, 6>)

extern "C" int dd_k23_dgemm_gated(DD_LAUNCHER_ARGS(double), const unsigned int *gate)
{
    return launch12<true, 6, 4, 6>(m, n, k, A, lda, B, ldb, beta, C, ldc, stream, gate);
}
