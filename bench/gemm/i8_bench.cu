/* i8_bench.cuh — gemm-bench's INT8 rows (--types i8): the project's INT8
 * GEMM (i8gemm.cu, the product inside ozaki2) against cuBLAS's INT8 GEMM
 * (cublasGemmStridedBatchedEx, INT32 compute: the call ozaki2 made before),
 * on the same operands in the layout ozaki2 uses: A (m×k) and B (n×k) both
 * k-contiguous, --i8-batch products at once (default 1).
 *
 * Check first, exact: random INT8 over the whole range [-128, 127], the
 * rows' padding past k filled with other random bytes (never to be read);
 * the own INT32 output must equal cuBLAS's element for element, and the
 * fused-residue output (i8gemm_mod, moduli of ozaki2.h in turn) must equal
 * oz2_symmod of cuBLAS's element.  The "check" column is the number of
 * elements that differ (0 or the row FAILS, untimed); where cuBLAS
 * refuses a shape, exact integer sums on the GPU are the reference.  The
 * output's ld is n rounded up to 4: the residues' 8-byte stores and their
 * byte-wise path (ld not a multiple of 8, e.g. n = 257) are both checked.  Then the timing
 * of time_runs (gemm_modes.cuh's burst); TOP/s count 2·m·n·k per product. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <string>

#include "dd_splitmix.h"
#include "gemm_bench.h"
#include "gemm_modes.cuh"
#include "i8gemm.h"
#include "ozaki2.h"

namespace gb
{

__global__ void i8_fill(int8_t *p, size_t n, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = (int8_t)(dd_splitmix64(seed + i) >> 56);
}

/* The reference where cuBLAS refuses a shape (its INT8 kernels want, e.g.,
 * m a multiple of 4): exact integer sums, one thread per element. */
__global__ void i8_naive(int batch, int64_t m, int64_t n, int64_t k, const int8_t *A, int64_t lda,
                         int64_t sa, const int8_t *B, int64_t ldb, int64_t sb, int32_t *C,
                         int64_t ldc, int64_t sc)
{
    const int64_t total = (int64_t)batch * m * n;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t q = t / (m * n), i = (t / n) % m, j = t % n;
        const int8_t *a = A + q * sa + i * lda, *b = B + q * sb + j * ldb;
        int32_t acc = 0;
        for (int64_t l = 0; l < k; ++l)
            acc += (int32_t)a[l] * (int32_t)b[l];
        C[q * sc + i * ldc + j] = acc;
    }
}

/* Elements of the own output (INT32, or residues modulo mod[q]) that differ
 * from the reference's; the reference and C share ld and stride. */
__global__ void i8_diff(const int32_t *ref, const void *own, int mod_out, int64_t m, int64_t n,
                        int64_t ld, int64_t stride, int batch, const int *mods,
                        unsigned long long *bad)
{
    unsigned long long mine = 0;
    const int64_t total = (int64_t)batch * m * n;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t q = t / (m * n), i = (t / n) % m, j = t % n, at = q * stride + i * ld + j;
        if (mod_out) {
            const double md = mods[q];
            mine += (double)((const int8_t *)own)[at] != oz2_symmod((double)ref[at], md, 1.0 / md);
        } else {
            mine += ((const int32_t *)own)[at] != ref[at];
        }
    }
    if (mine)
        ::atomicAdd(bad, mine);
}

int g_i8_skipped; /* sizes whose INT8 rows were skipped: no own INT8 GEMM on this GPU */

int i8_bench(const options &o, const env_info &env, shape sh, void *flush, size_t flush_bytes,
             cudaStream_t s, uint64_t *seed)
{
    const int batch = o.i8_batch;
    if (!dd_i8gemm_available()) {
        row r = {"i8gemm", "i8",      sh,
                 0,        0,         NAN,
                 NAN,      NAN,       NAN,
                 NAN,      "skipped", "(needs compute capability 9.0 and a build with sm_90a)"};
        emit(o, env, r);
        ++g_i8_skipped;
        return 0;
    }
    const int64_t m = sh.m, n = sh.n, k = sh.k, ld = (k + 15) / 16 * 16, ldc = (n + 3) / 4 * 4;
    const int64_t sa = m * ld, sb = n * ld, sc = m * ldc;
    int8_t *A = nullptr, *B = nullptr, *R = nullptr;
    int32_t *C = nullptr, *Cref = nullptr;
    int *mods_d = nullptr;
    unsigned long long *bad = nullptr;
    int mods[DD_I8GEMM_MAX_MOD];
    static const int all_mods[] = OZ2_MODULI_INIT;
    for (int q = 0; q < DD_I8GEMM_MAX_MOD; ++q)
        mods[q] = all_mods[q % OZ2_MAX_MODULI];
    cudaError_t ae = cudaMalloc(&A, (size_t)batch * sa);
    if (ae == cudaSuccess)
        ae = cudaMalloc(&B, (size_t)batch * sb);
    if (ae == cudaSuccess)
        ae = cudaMalloc(&C, (size_t)batch * sc * 4);
    if (ae == cudaSuccess)
        ae = cudaMalloc(&Cref, (size_t)batch * sc * 4);
    if (ae == cudaSuccess)
        ae = cudaMalloc(&R, (size_t)batch * sc);
    if (ae == cudaSuccess)
        ae = cudaMalloc(&mods_d, sizeof mods);
    if (ae == cudaSuccess)
        ae = cudaMalloc(&bad, sizeof *bad);
    if (ae != cudaSuccess) {
        fprintf(stderr, "gemm-bench: i8 %lldx%lldx%lld: %s; size skipped\n", (long long)m,
                (long long)n, (long long)k, cudaGetErrorString(ae));
        (void)cudaGetLastError();
        for (void *p : {(void *)A, (void *)B, (void *)C, (void *)Cref, (void *)R, (void *)mods_d,
                        (void *)bad})
            if (p)
                (void)cudaFree(p);
        return 1;
    }
    CK(cudaMemcpy(mods_d, mods, sizeof mods, cudaMemcpyHostToDevice));
    ++*seed;
    i8_fill<<<1024, 256, 0, s>>>(A, (size_t)batch * sa, *seed * 3 + 0);
    i8_fill<<<1024, 256, 0, s>>>(B, (size_t)batch * sb, *seed * 3 + 1);
    CK(cudaGetLastError());
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS ||
        cublasSetStream(h, s) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "gemm-bench: cannot make a cuBLAS handle\n");
        exit(1);
    }
    const int32_t one = 1, zero = 0;
    /* column-major C^T (n × m) = B^T·A: the TN form of cuBLAS's IMMA kernels */
    auto cublas_run = [&](int32_t *out) {
        return (int)cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)m, (int)k,
                                               &one, B, CUDA_R_8I, (int)ld, sb, A, CUDA_R_8I,
                                               (int)ld, sa, &zero, out, CUDA_R_32I, (int)ldc, sc,
                                               batch, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
    };
    auto own_s32 = [&]() {
        return dd_i8gemm_s32(batch, m, n, k, A, ld, sa, B, ld, sb, C, ldc, sc, (void *)s);
    };
    auto own_mod = [&]() {
        return dd_i8gemm_mod(batch, m, n, k, A, ld, sa, B, ld, sb, mods, R, ldc, sc, nullptr,
                             (void *)s);
    };
    const bool cublas_ok = cublas_run(Cref) == CUBLAS_STATUS_SUCCESS;
    if (!cublas_ok) {
        i8_naive<<<4096, 256, 0, s>>>(batch, m, n, k, A, ld, sa, B, ld, sb, Cref, ldc, sc);
        CK(cudaGetLastError());
    }
    const double ops = 2.0 * m * n * k * batch;
    std::string names[3] = {"i8gemm", "i8gemm_mod", "cublas_i8"};
    for (auto &x : names)
        x += " (x" + std::to_string(batch) + ")";
    row cb = {names[2].c_str(), "i8", sh, 0, o.reps, NAN, NAN, NAN, 100.0, 0.0, "ok", ""};
    if (!cublas_ok) {
        cb.status = "skipped";
        cb.note = "(cuBLAS INT8 refuses this shape; the check used exact integer sums)";
    } else if (time_runs([&]() { return cublas_run(C) == CUBLAS_STATUS_SUCCESS ? 0 : 1; }, o.warmup,
                         o.reps, flush, flush_bytes, s, &cb.ms_median, &cb.ms_min, &cb.tele)) {
        fprintf(stderr, "gemm-bench: cuBLAS INT8 GEMM failed\n");
        exit(1);
    }
    cb.tflops = ops / (cb.ms_median * 1e-3) / 1e12;
    int failures = 0;
    for (int mod_out = 0; mod_out <= 1; ++mod_out) {
        row r = {names[mod_out].c_str(), "i8", sh, 0, o.reps, NAN, NAN, NAN, NAN, NAN, "ok", ""};
        auto run = [&]() { return mod_out ? own_mod() : own_s32(); };
        /* poisoned output: an element never written cannot match */
        CK(cudaMemsetAsync(mod_out ? (void *)R : (void *)C, 0x7f,
                           (size_t)batch * sc * (mod_out ? 1 : 4), s));
        CK(cudaMemsetAsync(bad, 0, sizeof *bad, s));
        int e = run();
        if (!e) {
            i8_diff<<<1024, 256, 0, s>>>(Cref, mod_out ? (void *)R : (void *)C, mod_out, m, n, ldc,
                                         sc, batch, mods_d, bad);
            e = (int)cudaGetLastError();
        }
        unsigned long long nbad = 0;
        if (!e)
            e = (int)cudaMemcpyAsync(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost, s);
        if (!e)
            e = (int)cudaStreamSynchronize(s);
        r.err = (double)nbad;
        if (e || nbad) {
            r.status = e ? "error" : "FAILED";
            r.note = e ? cudaGetErrorString((cudaError_t)e) : "(elements differ from cuBLAS)";
            (void)cudaGetLastError();
            ++failures;
        } else if ((e = time_runs(run, o.warmup, o.reps, flush, flush_bytes, s, &r.ms_median,
                                  &r.ms_min, &r.tele))) {
            r.status = "error";
            r.note = cudaGetErrorString((cudaError_t)e);
            ++failures;
        } else {
            r.tflops = ops / (r.ms_median * 1e-3) / 1e12;
            r.pct = cublas_ok ? 100.0 * cb.ms_median / r.ms_median : NAN;
        }
        emit(o, env, r);
    }
    emit(o, env, cb);
    cublasDestroy(h);
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
    CK(cudaFree(Cref));
    CK(cudaFree(R));
    CK(cudaFree(mods_d));
    CK(cudaFree(bad));
    return failures;
}

} // namespace gb
