/* sgemm_dmma — the FP32 production kernel: FP32 C = A·B (+ C) on the FP64
 * tensor cores.  The FP32 operands are widened to FP64 (exactly),
 * dgemm_dmma's kernel (dmma_gemm.cuh) multiplies them with products and
 * sums in FP64, and each C value is rounded to FP32 once at the end.
 *
 * Why: an H200's FP64 tensor cores and its FP32 CUDA cores have the same
 * peak (67 TFLOP/s), but FP32 FFMA code is issue-bound (one warp
 * instruction per scheduler and cycle: every address or loop instruction
 * costs an FFMA slot), while the tensor cores are not.  The result is at
 * least as accurate as SGEMM's (a product of two FP32 values is exact in
 * FP64, and k terms summed in FP64 lose about k·2^-53 against SGEMM's
 * k·2^-24), but not bit-identical to it: sgemm_simt computes in FP32.
 *
 * How: two passes before the multiply widen A (m × k) and B (k × n) into
 * FP64 copies with even leading dimensions (the TMA's 16-byte strides), in
 * a workspace from stream-K's stream-ordered pool; the kernel then runs
 * with a float C (store_acc with TC float: beta 1 adds C's old value in
 * FP64 before the one rounding).  The widening reads 4 and writes 8 bytes
 * per element of A and B, which the multiply reads again: by that count
 * about 3% of the time at n = 8192 and 1% on a 16384²×1024 panel.  Falls back
 * to sgemm_simt where the GPU is not compute 9.x (or the build has no
 * sm_90 code) or the workspace cannot be had; kernel_note() counts those
 * calls.  dd_sgemm_dmma_gated (launchers.h) is the same multiply gated on a
 * device word, ozaki2's FP32 fallback (ozaki2_s.cu). */
#include <atomic>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dd_knobs.h"
#include "dmma_gemm.cuh"

namespace
{

/* dst (rows × cols, leading dimension ldd) = src widened, a block per row
 * in turn; columns cols .. ldd - 1 are not written (no box reads them).
 * gate: NULL, or a device word read first: zero, and nothing is done. */
__global__ void widen(const float *__restrict__ src, int64_t lds, double *__restrict__ dst,
                      int64_t ldd, int rows, int cols, const unsigned int *gate)
{
    if (gate && !*(volatile const unsigned int *)gate)
        return;
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const float *s = src + (int64_t)r * lds;
        double *d = dst + (int64_t)r * ldd;
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            d[c] = (double)s[c];
    }
}

int widen_async(const float *src, int64_t lds, double *dst, int64_t ldd, int64_t rows,
                int64_t cols, int sms, cudaStream_t s, const unsigned int *gate)
{
    const int64_t cap = 16LL * sms;
    widen<<<(unsigned)(rows < cap ? rows : cap), 256, 0, s>>>(src, lds, dst, ldd, (int)rows,
                                                               (int)cols, gate);
    return dd::launch_status();
}

/* Calls since the last note that ran sgemm_simt instead (no workspace for
 * the FP64 copies; a GPU or build without sm_90 code is said once per
 * note). */
std::atomic<unsigned long long> g_calls{0}, g_no_space{0}, g_no_sm90{0};

/* DD_SGEMM_WORKSPACE_MIB: the most device memory (MiB) a call may take for
 * the FP64 copies; a call that needs more runs sgemm_simt (0: every call).  Unset:
 * no bound but the device's free memory. */
size_t workspace_cap(void)
{
    const long long mib = dd_knob_int(DDK_SGEMM_WORKSPACE_MIB); /* 0..2^43-1, -1: unset */
    return mib < 0 ? SIZE_MAX : (size_t)mib << 20;
}

/* gate: NULL, or a device word the widening and the kernel read first:
 * they work only where it is nonzero (sgemm_dmma gated is ozaki2's FP32
 * fallback, ozaki2_s.cu, decided on the GPU).  Gated calls never run
 * sgemm_simt and are not counted in the note: cudaErrorNotSupported
 * instead, and the caller falls back its own way. */
int sgemm_dmma(DD_LAUNCHER_ARGS(float), const unsigned int *gate = nullptr)
{
    cudaStream_t s = (cudaStream_t)stream;
    bool go;
    int e = dd::gemm_prologue<float>(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &go);
    if (e != cudaSuccess || !go)
        return e;
    int dev = 0, sms = 0;
    long long tiles = 0;
    bool ok;
    if ((e = tma_target<float>(m, n, k, &dev, &tiles, &ok)) ||
        (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)))
        return e;
    if (!gate)
        ++g_calls;
    if (!ok || dev >= 64 || tiles > INT_MAX) {
        if (gate)
            return cudaErrorNotSupported;
        ++g_no_sm90;
        return dd_sgemm_simt(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
    }
    /* the FP64 copies: A as m × ka, B as k × nb (even leading dimensions) */
    const int64_t ka = (k + 1) & ~(int64_t)1, nb = (n + 1) & ~(int64_t)1;
    const size_t elems = (size_t)m * (size_t)ka + (size_t)k * (size_t)nb;
    void *ws = nullptr;
    const bool pending = cudaPeekAtLastError() != cudaSuccess; /* the caller's: kept */
    if (elems > workspace_cap() / sizeof(double) ||
        dd_sk::pool_alloc(dev, elems * sizeof(double), s, &ws) != cudaSuccess) {
        if (!pending)
            (void)cudaGetLastError(); /* ours: it only means sgemm_simt */
        if (gate)
            return cudaErrorNotSupported;
        ++g_no_space;
        return dd_sgemm_simt(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
    }
    double *A64 = (double *)ws, *B64 = A64 + (size_t)m * (size_t)ka;
    CUtensorMap ta, tb;
    if (!(e = widen_async(A, lda, A64, ka, m, k, sms, s, gate)) &&
        !(e = widen_async(B, ldb, B64, nb, k, n, sms, s, gate)) &&
        !(e = make_maps(m, n, k, A64, ka, B64, nb, &ta, &tb))) {
        const bool vec = (uintptr_t)C % 8 == 0 && ldc % 2 == 0;
        e = run_dmma_gemm<float>(ta, tb, m, n, k, beta, C, ldc, tiles, dev, vec, s, gate);
    }
    const int fe = cudaFreeAsync(ws, s);
    return e ? e : fe;
}

} // namespace

DD_LAUNCHER(dd_sgemm_dmma, float, sgemm_dmma)

extern "C" int dd_sgemm_dmma_gated(DD_LAUNCHER_ARGS(float), const unsigned int *gate)
{
    return sgemm_dmma(m, n, k, A, lda, B, ldb, beta, C, ldc, stream, gate);
}

/* kernel.h's note: the calls since the last note that ran sgemm_simt. */
extern "C" const char *dd_sgemm_dmma_note(void)
{
    static char buf[256];
    const unsigned long long calls = g_calls.exchange(0), space = g_no_space.exchange(0),
                             sm90 = g_no_sm90.exchange(0);
    buf[0] = '\0';
    if (space + sm90)
        snprintf(buf, sizeof buf,
                 "%llu of %llu multiplies ran on sgemm_simt (%s)", space + sm90,
                 calls,
                 sm90 ? "the GPU is not compute 9.x or the build has no sm_90 code"
                      : "no GPU memory for the FP64 copies of A and B within DD_SGEMM_WORKSPACE_MIB "
                        "or the device's free memory");
    return buf;
}
