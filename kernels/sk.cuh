/* sk.cuh — stream-K for the last wave (dmma_gemm.cuh, for dgemm_dmma and
 * sgemm_dmma): the plan (sk_plan.h) and its workspace on the host, the
 * arrival of a partial tile on the device.  The kernel writes and sums its
 * partials in its own register layout.  sgemm_dmma takes its FP64 copies
 * from the same pool (pool_alloc). */
#pragma once

#include <cuda_runtime.h>
#include <stddef.h>

#include "sk_plan.h"

namespace dd_sk
{

/* Tiles [0, dp) run whole, one CTA each; the k-tiles of tiles [dp, dp +
 * tail), tile after tile, are cut into `ctas` equal shares.  ws: two
 * partial tiles per stream-K CTA; cnt: arrivals per tail tile, zero on
 * entry.  ctas = 0: whole tiles only. */
struct Args {
    int dp, tail, ctas;
    void *ws;
    unsigned *cnt;
};

/* The workspace comes from a memory pool of the project's own, one per
 * device, in the launch's stream order: concurrent multiplies on other
 * streams get other memory, and the pool keeps up to 256 MiB between
 * calls (the device's default pool is the application's). */
inline int pool_alloc(int dev, size_t bytes, cudaStream_t s, void **p)
{
    static cudaMemPool_t pools[64];
    static bool refused[64]; /* no pools on this device: asked once */
    if (dev < 0 || dev >= 64)
        return cudaErrorInvalidDevice;
    if (refused[dev])
        return cudaErrorNotSupported;
    if (!pools[dev]) {
        cudaMemPoolProps pp = {};
        pp.allocType = cudaMemAllocationTypePinned;
        pp.location.type = cudaMemLocationTypeDevice;
        pp.location.id = dev;
        cudaMemPool_t pool;
        int e = cudaMemPoolCreate(&pool, &pp);
        if (e != cudaSuccess) {
            refused[dev] = true;
            return e;
        }
        uint64_t keep = 256ull << 20;
        if ((e = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep)) !=
            cudaSuccess) {
            (void)cudaMemPoolDestroy(pool);
            return e;
        }
        pools[dev] = pool;
    }
    return cudaMallocFromPoolAsync(p, bytes, pools[dev], s);
}

/* The plan for `tiles` tiles of kt k-tiles on `slots` CTAs at a time, and
 * its workspace (`part`: bytes of one partial tile) on stream s.  A
 * workspace that cannot be had only means whole tiles (*a says which);
 * returns a cudaError_t for what must fail the call. */
inline int setup(long long tiles, long long slots, long long kt, size_t part, int dev,
                 cudaStream_t s, Args *a)
{
    *a = {(int)tiles, 0, 0, nullptr, nullptr};
    long long dp, tail, ctas;
    dd_sk_plan(tiles, slots, kt, &dp, &tail, &ctas);
    if (!ctas)
        return cudaSuccess;
    void *ws = nullptr;
    const bool pending = cudaPeekAtLastError() != cudaSuccess; /* the caller's: kept */
    if (pool_alloc(dev, 2 * ctas * part + tail * sizeof(unsigned), s, &ws) != cudaSuccess) {
        if (!pending)
            (void)cudaGetLastError(); /* ours: it only means whole tiles */
        return cudaSuccess;
    }
    unsigned *cnt = (unsigned *)((char *)ws + 2 * ctas * part);
    int e = cudaMemsetAsync(cnt, 0, tail * sizeof(unsigned), s);
    if (e != cudaSuccess) {
        (void)cudaFreeAsync(ws, s);
        return e;
    }
    *a = {(int)dp, (int)tail, (int)ctas, ws, cnt};
    return cudaSuccess;
}

/* After the launch: the workspace back to the pool, in stream order. */
inline int release(const Args &a, cudaStream_t s)
{
    return a.ws ? cudaFreeAsync(a.ws, s) : cudaSuccess;
}

/* Partial slot `slot` of a workspace whose partials are `elems` elements
 * of T each. */
template <typename T>
__device__ __forceinline__ T *slot_ptr(const Args &a, long long slot, size_t elems)
{
    return (T *)a.ws + slot * elems;
}

/* After this CTA wrote its partial of tail tile j (first k-tile t0, kt
 * deep, U k-tiles in the tail): its arrival.  True for the tile's last
 * contributor, which then sees every partial.  flag: a shared word. */
__device__ __forceinline__ bool arrive(const Args &a, long long U, long long t0, long long kt,
                                       int j, unsigned *flag)
{
    __threadfence();
    __syncthreads();
    const long long lo = dd_sk_owner(U, a.ctas, t0), hi = dd_sk_owner(U, a.ctas, t0 + kt - 1);
    if (threadIdx.x == 0)
        *flag = atomicAdd(&a.cnt[j], 1u) == (unsigned)(hi - lo);
    __syncthreads();
    const bool last = *(volatile unsigned *)flag;
    if (last)
        __threadfence();
    return last;
}

} // namespace dd_sk
