/* zgemm_dmma — the complex FP64 production kernel: C = A·B (+ C) for
 * complex double matrices of (re, im) pairs, on the FP64 tensor cores.
 *
 * How: the complex product is one real GEMM of twice the size
 * (cx_dmma.cuh): A is used in place as the real m × 2k matrix it already
 * is, B is expanded into the real 2k × 2n matrix B' of 2 × 2 blocks
 * [[Re, Im], [-Im, Re]] (one pass, into a workspace from the stream-ordered
 * pool), and dgemm_dmma multiplies them into C's real m × 2n view, beta
 * 0/1 as for a real C: 8·m·n·k flops, the complex count, at dgemm_dmma's
 * rate.  All of dgemm_dmma's paths apply: the TMA where A's base is 16-byte
 * aligned (the doubled row pitch always is, and B' is made so), the
 * cp.async tile otherwise (A at an odd double, or a GPU before compute
 * 9.0), stream-K for the last wave, the bulk-add beta-1 epilogue.
 *
 * Cost of the expansion: 16 bytes read and 32 written per element of B,
 * which the multiply then reads as a real B of twice the rows and columns:
 * by that count about 1% of the time at n = 8192 and 0.5% at 16384.
 *
 * Where B' cannot be had (the device's free memory) or the GPU has no FP64
 * tensor cores (before compute 8.0), the CUDA-core fallback of
 * cx_dmma.cuh runs; kernel_note() counts those calls. */
#include "cx_dmma.cuh"

namespace
{

dd_cx::counts g_counts;

int zgemm_dmma(DD_LAUNCHER_ARGS(double))
{
    cudaStream_t s = (cudaStream_t)stream;
    bool go;
    int e = dd::gemm_prologue_cx<double>(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &go);
    if (e != cudaSuccess || !go)
        return e;
    int dev = 0, major = 0, sms = 0;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) !=
            cudaSuccess ||
        (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess)
        return e;
    ++g_counts.calls;
    if (major < 8) { /* no FP64 tensor cores */
        ++g_counts.no_path;
        return dd_cx::fallback<double>(m, n, k, A, lda, B, ldb, beta, C, ldc, sms, s);
    }
    /* B' (2k × 2n, leading dimension 2n: even, so every row is 16-byte aligned) */
    const int64_t ldx = 2 * n;
    const size_t elems = (size_t)(2 * k) * (size_t)ldx;
    void *ws;
    if (!dd_cx::workspace(dev, elems * sizeof(double), s, &ws)) {
        ++g_counts.no_space;
        return dd_cx::fallback<double>(m, n, k, A, lda, B, ldb, beta, C, ldc, sms, s);
    }
    double *X = (double *)ws;
    if (!(e = dd_cx::expand_b_async<double>(B, ldb, X, ldx, k, n, sms, s)))
        e = dd_dgemm_dmma(m, 2 * n, 2 * k, A, 2 * lda, X, ldx, beta, C, 2 * ldc, stream);
    const int fe = cudaFreeAsync(ws, s);
    return e ? e : fe;
}

} // namespace

DD_LAUNCHER(dd_zgemm_dmma, double, zgemm_dmma)

/* kernel.h's note: the calls since the last note that ran the fallback. */
extern "C" const char *dd_zgemm_dmma_note(void)
{
    static char buf[256];
    return dd_cx::note(g_counts, buf, sizeof buf, "zgemm_dmma",
                       "the GPU has no FP64 tensor cores (before compute 8.0)");
}
