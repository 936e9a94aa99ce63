/* cgemm_dmma — the complex FP32 production kernel: FP32 C = A·B (+ C) for
 * complex float matrices of (re, im) pairs, on the FP64 tensor cores.
 *
 * How: sgemm_dmma's method on zgemm_dmma's real view (cx_dmma.cuh).  A
 * widened to FP64 (exact) is the real m × 2k matrix Ar; B widened and
 * expanded in one pass is the real 2k × 2n matrix B' of 2 × 2 blocks
 * [[Re, Im], [-Im, Re]] (exact: widening and negation round nothing); both
 * go into one workspace from the stream-ordered pool, and dgemm_dmma's
 * kernel (dmma_gemm.cuh) multiplies them with products and sums in FP64
 * into C's real m × 2n FP32 view, each C value rounded to FP32 once
 * (store_acc with a float C: beta 1 adds C's old value in FP64 before that
 * rounding).  So the result is more accurate than CGEMM's (k·2^-53 against
 * k·2^-24 per term), not bit-identical to it.
 *
 * Cost of the copies: 8 bytes read and 16 written per element of A, 8
 * read and 32 written per element of B, all read again by the multiply;
 * about 2% of the time at n = 8192 by that count.
 *
 * Where the GPU is not compute 9.x (or the build has no sm_90 code) or the
 * workspace cannot be had (the device's free memory), the CUDA-core
 * fallback of cx_dmma.cuh runs in FP32 arithmetic; kernel_note() counts
 * those calls. */
#include "cx_dmma.cuh"
#include "dmma_gemm.cuh"

namespace
{

dd_cx::counts g_counts;

/* dst (rows × cols doubles, leading dimension ldd) = src (lds floats)
 * widened, a block per row in turn. */
__global__ void widen_a(const float *__restrict__ src, int64_t lds, double *__restrict__ dst,
                        int64_t ldd, int rows, int cols)
{
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const float *s = src + (int64_t)r * lds;
        double *d = dst + (int64_t)r * ldd;
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            d[c] = (double)s[c];
    }
}

int cgemm_dmma(DD_LAUNCHER_ARGS(float))
{
    cudaStream_t s = (cudaStream_t)stream;
    bool go;
    int e = dd::gemm_prologue_cx<float>(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &go);
    if (e != cudaSuccess || !go)
        return e;
    int dev = 0, sms = 0;
    long long tiles = 0;
    bool ok;
    /* the real view: C m × 2n, 2k deep */
    if ((e = tma_target<float>(m, 2 * n, 2 * k, &dev, &tiles, &ok)) ||
        (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)))
        return e;
    ++g_counts.calls;
    if (!ok || dev >= 64 || tiles > INT_MAX) {
        ++g_counts.no_path;
        return dd_cx::fallback<float>(m, n, k, A, lda, B, ldb, beta, C, ldc, sms, s);
    }
    /* Ar in FP64 (m × 2k, leading dimension 2k), B' (2k × 2n, leading
     * dimension 2n): even, so every row is 16-byte aligned for the TMA */
    const int64_t lda64 = 2 * k, ldx = 2 * n;
    const size_t a_elems = (size_t)m * (size_t)lda64, elems = a_elems + (size_t)(2 * k) * ldx;
    void *ws;
    if (!dd_cx::workspace(dev, elems * sizeof(double), s, &ws)) {
        ++g_counts.no_space;
        return dd_cx::fallback<float>(m, n, k, A, lda, B, ldb, beta, C, ldc, sms, s);
    }
    double *A64 = (double *)ws, *X = A64 + a_elems;
    const int64_t cap = 16LL * sms;
    widen_a<<<(unsigned)(m < cap ? m : cap), 256, 0, s>>>(A, 2 * lda, A64, lda64, (int)m,
                                                          (int)(2 * k));
    CUtensorMap ta, tb;
    if (!(e = dd::launch_status()) &&
        !(e = dd_cx::expand_b_async<float>(B, ldb, X, ldx, k, n, sms, s)) &&
        !(e = make_maps(m, 2 * n, 2 * k, A64, lda64, X, ldx, &ta, &tb))) {
        const bool vec = (uintptr_t)C % 8 == 0; /* float pairs; the real ldc 2·ldc is even */
        e = run_dmma_gemm<float>(ta, tb, m, 2 * n, 2 * k, beta, C, 2 * ldc, tiles, dev, vec, s);
    }
    const int fe = cudaFreeAsync(ws, s);
    return e ? e : fe;
}

} // namespace

DD_LAUNCHER(dd_cgemm_dmma, float, cgemm_dmma)

/* kernel.h's note: the calls since the last note that ran the fallback. */
extern "C" const char *dd_cgemm_dmma_note(void)
{
    static char buf[256];
    return dd_cx::note(g_counts, buf, sizeof buf, "cgemm_dmma",
                       "the GPU is not compute 9.x or the build has no sm_90 code");
}
