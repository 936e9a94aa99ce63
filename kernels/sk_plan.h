/* sk_plan.h — how dgemm_dmma (and sgemm_dmma) split a multiply between
 * whole tiles and stream-K (host arithmetic only, so the CPU tests check
 * it: tests/unit/test_sk_plan.c).
 *
 * A grid of T output tiles on P SMs (one CTA each) runs in ceil(T/P)
 * waves; when T mod P is small the last wave leaves most SMs idle (n =
 * 8192: 4096 tiles on 132 SMs, 32 waves for 31.03 waves of work).  Stream-K
 * for the tail: the first dp tiles run whole, one CTA each, in full waves;
 * the k-iterations of the remaining `tail` tiles, taken tile after tile,
 * are cut into `ctas` equal shares, one CTA each.  A tile whose k-range is
 * split is summed by its last contributor, in a fixed order.
 *
 * The cost model is in k-iterations of one CTA: whole waves × kt, plus the
 * largest share, plus per-share overheads (pipeline fills, the partial
 * written and read back).  Stream-K is chosen only where it gains at least
 * 1% over whole tiles. */
#ifndef DD_SK_PLAN_H
#define DD_SK_PLAN_H

/* A CTA's share is at least this many k-iterations (a pipeline fill costs
 * about 2). */
#define DD_SK_MIN_SHARE 8

/* dp_tiles + tail = tiles; *ctas is 0 (whole tiles only) or the number of
 * stream-K CTAs (then every share has at least DD_SK_MIN_SHARE k-tiles). */
static inline void dd_sk_plan(long long tiles, long long slots, long long kt, long long *dp_tiles,
                              long long *tail, long long *ctas)
{
    *dp_tiles = tiles > 0 ? tiles : 0;
    *tail = 0;
    *ctas = 0;
    if (tiles <= 0 || slots <= 0 || kt < DD_SK_MIN_SHARE || tiles % slots == 0)
        return;
    const long long whole = (tiles + slots - 1) / slots * kt;
    long long best = whole;
    for (long long extra = 0; extra <= 1; ++extra) {
        const long long t = tiles % slots + extra * slots;
        if (t > tiles)
            break;
        const long long share = (t * kt + slots - 1) / slots;
        if (t * kt / slots < DD_SK_MIN_SHARE)
            continue;
        /* contributors of one split tile, and the fills of one CTA */
        const long long contrib = (kt + share - 1) / share + 1;
        const long long fills = share / kt + 2;
        const long long cost = (tiles - t) / slots * kt + share + 2 * fills + 2 * contrib;
        if (cost < best) {
            best = cost;
            *tail = t;
        }
    }
    if (*tail == 0 || best * 100 > whole * 99) {
        *tail = 0;
        return;
    }
    *dp_tiles = tiles - *tail;
    *ctas = slots;
}

#ifdef __CUDACC__
#define DD_SK_HD __host__ __device__ __forceinline__
#else
#define DD_SK_HD static inline
#endif

/* The first k-tile of stream-K CTA c's share: shares of U k-tiles (tail ×
 * kt, tile-major) cut at U·c / ctas. */
DD_SK_HD long long dd_sk_begin(long long U, long long ctas, long long c)
{
    return U * c / ctas;
}

/* The stream-K CTA whose share holds k-tile u: c = u·ctas / U never
 * starts past u (U·c / ctas <= u), so the search only moves up. */
DD_SK_HD long long dd_sk_owner(long long U, long long ctas, long long u)
{
    long long c = u * ctas / U;
    while (c + 1 < ctas && dd_sk_begin(U, ctas, c + 1) <= u)
        ++c;
    return c;
}

/* Where CTA c keeps its partial of the tile whose first k-tile is t0: a CTA
 * has at most two, its share's first tile when the share starts inside it
 * (slot 2c) and a tile it starts but does not finish (2c + 1). */
DD_SK_HD long long dd_sk_slot(long long U, long long ctas, long long c, long long t0)
{
    return 2 * c + (dd_sk_begin(U, ctas, c) <= t0);
}

#endif
