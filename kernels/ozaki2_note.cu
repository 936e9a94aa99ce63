/* ozaki2_note.cu — what the FP64 ozaki2 kernels report (kernel.h's
 * kernel_counts and kernel_note, through launchers.h): per device, the
 * multiplies at a given count of moduli, ozaki2-auto's choices, and the
 * fallbacks to native FP64 with the last reason.  The counts are host
 * counters of ozaki2.cu's workspaces (ozaki2_ws.cuh); the fallbacks come
 * from the device's stats word, read and reset here. */
#include <cuda_runtime.h>
#include <stdio.h>

#include "launchers.h"
#include "ozaki2.h"
#include "ozaki2_ws.cuh"

using oz2::device_ws_at;
using oz2::MAX_DEVICES;
using oz2::workspace;

/* kernel.h (kernel_counts): the multiplies at a given count of moduli
 * since the last call, over every device used; host counters only. */
extern "C" const char *dd_ozaki2_counts(void)
{
    static char buf[512];
    size_t used = 0;
    buf[0] = '\0';
    for (int d = 0; d < MAX_DEVICES; ++d) {
        workspace *w = device_ws_at(d);
        const oz2::tally t = w->fixed;
        if (!t.n || used >= sizeof buf)
            continue;
        int wr = t.min == t.max
                     ? snprintf(buf + used, sizeof buf - used,
                                "%sozaki2 (GPU %d): %llu multiplies at %d moduli", used ? "; " : "",
                                d, t.n, t.min)
                     : snprintf(buf + used, sizeof buf - used,
                                "%sozaki2 (GPU %d): %llu multiplies at %d to %d moduli, the last "
                                "at %d",
                                used ? "; " : "", d, t.n, t.min, t.max, t.last);
        used += wr > 0 ? (size_t)wr : 0;
        w->fixed = oz2::tally{};
    }
    return buf;
}

/* kernel.h: the fallbacks since the last call, over every device used. */
extern "C" const char *dd_ozaki2_note(void)
{
    static char buf[1024];
    static const char *what[] = {"",
                                 "a row of A holds a non-finite value",
                                 "a column of B holds a non-finite value",
                                 "row",
                                 "column",
                                 "guard (ozaki2-auto): the error bound needs more than 20 moduli",
                                 "guard (ozaki2-auto): emulation would be slower than native",
                                 "guard (ozaki2-auto): an entry has no lower bound of |A||B| "
                                 "(sparse rows meeting sparse columns)",
                                 "does not match its multiply (kernel_slices_gemm)"};
    static_assert(sizeof what / sizeof what[0] == oz2::REASON_COUNT, "one text per reason");
    buf[0] = '\0';
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess)
        return buf;
    size_t used = 0;
    for (int d = 0; d < MAX_DEVICES; ++d) {
        workspace *w = device_ws_at(d);
        oz2::stats sx;
        if (!w->ready || cudaSetDevice(d) != cudaSuccess ||
            cudaMemcpy(&sx, w->sx, sizeof sx, cudaMemcpyDeviceToHost) != cudaSuccess ||
            cudaMemset(w->sx, 0, sizeof sx) != cudaSuccess)
            continue;
        unsigned long long calls = w->calls;
        w->calls = 0;
        if (w->auto_chunks && used < sizeof buf) {
            const oz2::tally t = w->auto_emul;
            int wr = t.n
                         ? snprintf(buf + used, sizeof buf - used,
                                    "%sozaki2-auto (GPU %d): %llu of %llu multiplies emulated, "
                                    "moduli min %d max %d last %d",
                                    used ? "; " : "", d, t.n, w->auto_chunks, t.min, t.max,
                                    t.last)
                         : snprintf(buf + used, sizeof buf - used,
                                    "%sozaki2-auto (GPU %d): 0 of %llu multiplies emulated",
                                    used ? "; " : "", d, w->auto_chunks);
            used += wr > 0 ? (size_t)wr : 0;
            w->auto_chunks = 0;
            w->auto_emul = oz2::tally{};
        }
        if (!sx.fallbacks || used >= sizeof buf)
            continue;
        int r = (int)sx.reason;
        int wr;
        if (r == oz2::REASON_GUARD_SLOW)
            wr = snprintf(buf + used, sizeof buf - used,
                          "%sozaki2 (GPU %d): %llu of %llu multiplies fell back to native FP64; "
                          "last: %s (%d moduli at k = %d)",
                          used ? "; " : "", d, sx.fallbacks, calls, what[r], sx.index, sx.lossy);
        else if (r == oz2::REASON_A_RANGE || r == oz2::REASON_B_RANGE)
            wr = snprintf(buf + used, sizeof buf - used,
                          "%sozaki2 (GPU %d): %llu of %llu multiplies fell back to native FP64; "
                          "last: %s %d of %s: %d of its %d nonzeros keep < %d bits at %d moduli "
                          "(exponent range too wide)",
                          used ? "; " : "", d, sx.fallbacks, calls, what[r], sx.index,
                          r == oz2::REASON_A_RANGE ? "A" : "B", sx.lossy, sx.nnz, OZ2_KEEP_BITS,
                          sx.moduli);
        else if (r == oz2::REASON_SLICES)
            wr = snprintf(buf + used, sizeof buf - used,
                          "%sozaki2 (GPU %d): %llu of %llu multiplies fell back to native FP64; "
                          "last: the blob of %s %s",
                          used ? "; " : "", d, sx.fallbacks, calls, sx.index ? "B" : "A", what[r]);
        else if (r == oz2::REASON_GUARD_NEED || r == oz2::REASON_GUARD_NOBOUND)
            wr = snprintf(buf + used, sizeof buf - used,
                          "%sozaki2 (GPU %d): %llu of %llu multiplies fell back to native FP64; "
                          "last: %s",
                          used ? "; " : "", d, sx.fallbacks, calls, what[r]);
        else
            wr = snprintf(buf + used, sizeof buf - used,
                          "%sozaki2 (GPU %d): %llu of %llu multiplies fell back to native FP64; "
                          "last: %s (index %d)",
                          used ? "; " : "", d, sx.fallbacks, calls,
                          what[r < oz2::REASON_COUNT ? r : 0], sx.index);
        used += wr > 0 ? (size_t)wr : 0;
    }
    (void)cudaSetDevice(cur);
    return buf;
}
