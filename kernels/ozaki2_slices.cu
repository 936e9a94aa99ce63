/* ozaki2_slices.cu — kernel.h's sliced operands for the FP64 Ozaki-II
 * kernels (ozaki2, ozaki2-N): SUMMA's owner of a panel slices it once
 * (kernel_slices_make), the blob travels, and every rank multiplies from
 * blobs (kernel_slices_gemm) with the kernels ozaki2.cu runs in a chunk
 * (ozaki2_ws.cuh: slice(), products()), so that the result is bit for bit
 * the launcher's on the same operands.
 *
 * A blob, offsets from its start (no pointers: copied byte for byte
 * anywhere, it stays valid; its start must be 16-byte aligned, and every
 * size is a multiple of 256 so that blobs placed one after another in a
 * cudaMalloc'd buffer all are):
 *   0     the header (blob_header, 256 bytes): the slicer's verdict
 *         (oz2::status: flag 0 in range, else the reason and where), a
 *         magic word, the moduli, the side, the vectors and k;
 *   256   the scales, int32, one per vector, up(vectors, 4) of them
 *         (region rounded up to 256 bytes);
 *   then  the N slices, INT8: slice q of vector v at q·v4·kp + v·kp
 *         (v4 = up(vectors, 4), kp = up(k, 32)), k-contiguous and zero past
 *         k: exactly the layout a chunk of ozaki2.cu slices into, so the
 *         INT8 products read a blob as they read the workspace.  The pad
 *         vectors past `vectors` are never written (products past the last
 *         row or column are computed and never read).
 * Only k ≤ OZ2_KCHUNK (one chunk) is offered: longer k would need one blob
 * per chunk, which kernel_slices_moduli says by returning 0. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "cublas_handles.cuh"
#include "launchers.h"
#include "ozaki2.h"
#include "ozaki2_ws.cuh"

namespace
{

using oz2::up;

/* "OZ2S" in its bytes; a new layout takes a new word. */
constexpr int32_t BLOB_MAGIC = 0x53325a4f;

struct blob_header {
    oz2::status st; /* the slicer's verdict: flagged by slice() */
    int32_t magic, moduli, side, reserved;
    int64_t vectors, k;
    unsigned char pad[256 - sizeof(oz2::status) - 4 * sizeof(int32_t) - 2 * sizeof(int64_t)];
};
static_assert(sizeof(blob_header) == 256, "the header is 256 bytes");
static_assert(offsetof(blob_header, st) == 0, "the verdict opens the header");
static_assert(sizeof(size_t) >= 8, "blob sizes need 64 bits");

/* Where the pieces of a blob are; false for arguments no blob has. */
struct blob_layout {
    int64_t v4, kp;
    size_t off_s, off_x, bytes;
};
bool blob_plan(int nm, int64_t vectors, int64_t k, blob_layout *b)
{
    if (nm < OZ2_MIN_MODULI || nm > OZ2_MAX_MODULI || vectors < 0 ||
        vectors > (int64_t)INT32_MAX / 4 || k < 1 || k > OZ2_KCHUNK)
        return false;
    b->v4 = up(vectors, 4), b->kp = up(k, 32);
    b->off_s = sizeof(blob_header);
    b->off_x = b->off_s + (size_t)up(4 * b->v4, 256);
    b->bytes = b->off_x + (size_t)up((int64_t)nm * b->v4 * b->kp, 256);
    return true;
}

bool aligned16(const void *p)
{
    return (uintptr_t)p % 16 == 0;
}

/* One thread: the header, its verdict zeroed (in range until slice()
 * flags it). */
__global__ void put_header(blob_header *dst, blob_header h)
{
    *dst = h;
}

/* One thread: the multiply's verdict into st from the two blobs' (A's
 * first, as a chunk's slicing of A precedes B's), REASON_SLICES where a
 * header does not describe this multiply's operand. */
__global__ void merge_verdicts(const blob_header *a, const blob_header *b, int nm, int64_t m,
                               int64_t n, int64_t k, oz2::status *st)
{
    oz2::status v = {};
    const bool a_ok = a->magic == BLOB_MAGIC && a->moduli == nm && a->side == 0 &&
                      a->vectors == m && a->k == k;
    const bool b_ok = b->magic == BLOB_MAGIC && b->moduli == nm && b->side == 1 &&
                      b->vectors == n && b->k == k;
    if (!a_ok || !b_ok)
        v.flag = oz2::REASON_SLICES, v.index = a_ok ? 1 : 0;
    else if (a->st.flag)
        v = a->st;
    else if (b->st.flag)
        v = b->st;
    *st = v;
}

/* After the products: *missed = the verdict's flag and, where flagged and
 * beta is 0, C zeroed (the CRT wrote nothing: C is then beta·C).  A blob's
 * own verdict is not counted as a fallback: the caller redoes the panel
 * with the launcher, whose range check finds the same row or column and
 * records it (kernel_note); a mismatched blob is recorded here, since that
 * redo would not show it.  Blocks stride over the rows. */
__global__ void __launch_bounds__(256) finish(const oz2::status *st, oz2::stats *sx, int nm,
                                              int m, int n, int beta, double *C, int64_t ldc,
                                              unsigned int *missed)
{
    const unsigned int why = st->flag;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *missed = why;
        if (why == oz2::REASON_SLICES) {
            sx->fallbacks++;
            sx->reason = why, sx->index = st->index, sx->lossy = st->lossy, sx->nnz = st->nnz;
            sx->moduli = nm;
        }
    }
    if (!why || beta)
        return;
    for (int r = blockIdx.x; r < m; r += gridDim.x)
        for (int c = threadIdx.x; c < n; c += blockDim.x)
            C[(int64_t)r * ldc + c] = 0.0;
}

} // namespace

extern "C" int kernel_slices_moduli(const kernel_desc *kd, int64_t k)
{
    if (!kd || !kd->dgemm || k < 1 || k > OZ2_KCHUNK)
        return 0;
    const kernel_dgemm_fn f = kd->dgemm;
    return f == dd_ozaki2      ? oz2_auto_moduli(k) /* what ozaki2_gemm takes for one chunk */
           : f == dd_ozaki2_14 ? 14
           : f == dd_ozaki2_15 ? 15
           : f == dd_ozaki2_16 ? 16
           : f == dd_ozaki2_18 ? 18
                               : 0;
}

extern "C" size_t kernel_slices_bytes(int moduli, int64_t vectors, int64_t k)
{
    blob_layout b;
    return blob_plan(moduli, vectors, k, &b) ? b.bytes : 0;
}

/* The header, then the slicing with the range check on (the fixed-count
 * launchers' chunk()), the verdict into the header.  Nothing of the
 * workspace but the constant parameters (device_ws initialises them): this
 * runs on another stream than the multiplies, concurrently with them. */
extern "C" int kernel_slices_make(int moduli, int side, int64_t vectors, int64_t k,
                                  const double *X, int64_t ld, void *blob, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    blob_layout b;
    if (!blob_plan(moduli, vectors, k, &b) || (side != 0 && side != 1) || !blob ||
        !aligned16(blob))
        return cudaErrorInvalidValue;
    if (vectors > 0 && (!X || ld < (side == 0 ? k : vectors)))
        return cudaErrorInvalidValue;
    oz2::workspace *w;
    int dev;
    OZ_TRY(oz2::device_ws(&w, &dev));
    char *base = static_cast<char *>(blob);
    blob_header *hd = reinterpret_cast<blob_header *>(base);
    blob_header h = {};
    h.magic = BLOB_MAGIC, h.moduli = moduli, h.side = side, h.vectors = vectors, h.k = k;
    put_header<<<1, 1, 0, s>>>(hd, h);
    OZ_TRY(cudaGetLastError());
    return oz2::slice(moduli, side, vectors, k, X, ld, reinterpret_cast<int *>(base + b.off_s),
                      reinterpret_cast<int8_t *>(base + b.off_x), b.v4 * b.kp, &hd->st, 1, s);
}

/* As ozaki2_gemm does for one chunk, with the slices read from the blobs:
 * the workspace (its status word and the tile of products only), the two
 * verdicts merged into its status, the products and the CRT (both doing
 * nothing where it is flagged), then *missed and beta·C. */
extern "C" int kernel_slices_gemm(int moduli, int64_t m, int64_t n, int64_t k, const void *a,
                                  const void *b, int beta, double *C, int64_t ldc,
                                  unsigned int *missed, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    blob_layout la, lb;
    if (!blob_plan(moduli, m, k, &la) || !blob_plan(moduli, n, k, &lb) ||
        (beta != 0 && beta != 1) || !missed)
        return cudaErrorInvalidValue;
    if (m == 0 || n == 0)
        return cudaMemsetAsync(missed, 0, sizeof *missed, s);
    if (!a || !b || !aligned16(a) || !aligned16(b) || !C || ldc < n)
        return cudaErrorInvalidValue;
    oz2::workspace *w;
    int dev;
    OZ_TRY(oz2::device_ws(&w, &dev));
    if (w->recorded)
        OZ_TRY(cudaStreamWaitEvent(s, w->done, 0));
    OZ_TRY(dd::from_cublas(cublasSetStream(w->h, s)));
    const oz2::layout L = oz2::plan(moduli, m, n, k, w->tile_mb, w->own_i8 ? 1 : 4);
    OZ_TRY(oz2::grow(w, L.tile));
    const char *pa = static_cast<const char *>(a), *pb = static_cast<const char *>(b);
    merge_verdicts<<<1, 1, 0, s>>>(reinterpret_cast<const blob_header *>(pa),
                                   reinterpret_cast<const blob_header *>(pb), moduli, m, n, k,
                                   w->st);
    OZ_TRY(cudaGetLastError());
    OZ_TRY(oz2::products(w, L, moduli, m, n, reinterpret_cast<const int8_t *>(pa + la.off_x),
                         reinterpret_cast<const int8_t *>(pb + lb.off_x),
                         reinterpret_cast<const int *>(pa + la.off_s),
                         reinterpret_cast<const int *>(pb + lb.off_s), w->buf, beta, C, ldc, s));
    const int grid = (int)(m < 2LL * w->sms ? m : 2LL * w->sms);
    finish<<<grid, 256, 0, s>>>(w->st, w->sx, moduli, (int)m, (int)n, beta, C, ldc, missed);
    OZ_TRY(cudaGetLastError());
    OZ_TRY(cudaEventRecord(w->done, s));
    w->recorded = true;
    ++w->calls;
    oz2::tally_add(&w->fixed, moduli);
    return cudaSuccess;
}
