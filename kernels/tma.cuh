/* tma.cuh — what the Hopper kernels fed by the Tensor Memory Accelerator
 * share (i8gemm.cu, dmma_gemm.cuh), and the mbarrier-paced cp.async kernels
 * too (sgemm_simt.cu): mbarrier waits and arrivals, TMA box loads into
 * shared memory, bulk adds from shared memory, and on the host the tensor
 * maps (the driver's cuTensorMapEncodeTiled, found at run time: no link to
 * libcuda) and whether a device runs the sm_90 code. */
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <stdint.h>

namespace dd_tma
{

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void bar_init(uint64_t *b, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(b)), "r"(count));
}

/* After the inits, before any thread uses the barriers (with a CTA barrier). */
__device__ __forceinline__ void bar_init_fence()
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/* Wait for the completion of the barrier's phase of the given parity. */
__device__ __forceinline__ void bar_wait(uint64_t *b, unsigned parity)
{
    uint32_t done;
    do {
        asm volatile("{\n.reg .pred p;\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done)
                     : "r"(smem_addr(b)), "r"(parity)
                     : "memory");
    } while (!done);
}

/* Arrive (release: this thread's earlier shared-memory reads are done). */
__device__ __forceinline__ void bar_arrive(uint64_t *b)
{
    asm volatile(
        "{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}" ::"r"(smem_addr(b))
        : "memory");
}

/* Arrive on the barrier once this thread's earlier cp.async copies have
 * landed (the arrival does not count towards the phase's expected count:
 * the barrier is initialised with one arrival per copying thread). */
__device__ __forceinline__ void cp_async_arrive(uint64_t *b)
{
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_addr(b))
                 : "memory");
}

/* Arrive and announce the bytes the TMA will deliver to this phase. */
__device__ __forceinline__ void bar_expect(uint64_t *b, unsigned bytes)
{
    asm volatile(
        "{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}" ::"r"(
            smem_addr(b)),
        "r"(bytes)
        : "memory");
}

/* One box of a 2-D map at (c0 innermost, c1) into shared memory. */
__device__ __forceinline__ void load_2d(void *dst, const CUtensorMap *map, uint64_t *bar, int c0,
                                        int c1)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4}], [%2];" ::"r"(smem_addr(dst)),
                 "l"((uint64_t)map), "r"(smem_addr(bar)), "r"(c0), "r"(c1)
                 : "memory");
}

/* One box of a 3-D map at (c0 innermost, c1, c2). */
__device__ __forceinline__ void load_3d(void *dst, const CUtensorMap *map, uint64_t *bar, int c0,
                                        int c1, int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(smem_addr(dst)),
                 "l"((uint64_t)map), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}

/* Make this thread's generic-proxy writes to shared memory visible to the
 * async proxy (bulk copies out of shared memory that follow a barrier). */
__device__ __forceinline__ void fence_async_smem()
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/* Bulk add of `bytes` (a multiple of 16, both ends 16-byte aligned) from
 * shared to global memory, FP64 (global += shared, done at L2: no load of
 * the old values into the SM). */
__device__ __forceinline__ void bulk_add_f64(double *dst, const void *src, unsigned bytes)
{
    asm volatile(
        "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f64 [%0], [%1], %2;" ::"l"(dst),
        "r"(smem_addr(src)), "r"(bytes)
        : "memory");
}

/* Close this thread's bulk copies into a group and wait until they have
 * read their shared-memory sources (the writes to global memory go on). */
__device__ __forceinline__ void bulk_wait_read()
{
    asm volatile("cp.async.bulk.commit_group;\ncp.async.bulk.wait_group.read 0;" ::: "memory");
}
#endif

/* A tiled map with the 128-byte swizzle, edges zero-filled: rank dims
 * (innermost first, elements), rank-1 strides (bytes, multiples of 16),
 * box sizes (elements; the innermost box row at most 128 bytes).  Returns a
 * cudaError_t (cudaErrorNotSupported where the driver lacks the call). */
inline int map_sw128(CUtensorMap *map, CUtensorMapDataType type, int rank, const void *base,
                     const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box)
{
    static PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
    if (!encode) {
        void *fn = nullptr;
        cudaDriverEntryPointQueryResult got;
#if CUDART_VERSION >= 12050
        cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                         cudaEnableDefault, &got);
#else /* the ByVersion call came with CUDA 12.5 */
        cudaError_t e =
            cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &got);
#endif
        if (e != cudaSuccess)
            return e;
        if (got != cudaDriverEntryPointSuccess || !fn)
            return cudaErrorNotSupported;
        encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    }
    const cuuint32_t step[3] = {1, 1, 1};
    CUresult r = encode(map, type, (cuuint32_t)rank, const_cast<void *>(base), dims, strides, box,
                        step, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

/* Whether `kern`, as this device runs it, was compiled for sm_90 or newer
 * (its PTX version; a build for older architectures JIT-compiles a trap
 * there), once per device: known[] is the caller's cache. */
template <typename Kernel> bool has_sm90_code(Kernel kern, int dev, signed char (&known)[64])
{
    if (dev < 0 || dev >= 64)
        return false;
    if (!known[dev]) {
        cudaFuncAttributes fa;
        bool ok = cudaFuncGetAttributes(&fa, kern) == cudaSuccess && fa.ptxVersion >= 90;
        (void)cudaGetLastError();
        known[dev] = ok ? 1 : -1;
    }
    return known[dev] > 0;
}

/* Whether the current device is compute 9.x and runs `kern` as sm_90 code
 * (known[]: has_sm90_code's cache); *e: the first error of the queries
 * (then false). */
template <typename Kernel> bool on_sm90(Kernel kern, signed char (&known)[64], int *e)
{
    int dev = 0, major = 0;
    if ((*e = cudaGetDevice(&dev)) != cudaSuccess ||
        (*e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) !=
            cudaSuccess)
        return false;
    return major == 9 && has_sm90_code(kern, dev, known);
}

} // namespace dd_tma
