/* test_sk_plan.c — dgemm_dmma's split between whole tiles and stream-K
 * (kernels/sk_plan.h), checked on the host: the plan's invariants over a
 * sweep of grids, SM counts and depths; known cases (a split where the last
 * wave is nearly empty, none where it gains under 1%); and the kernel's
 * bookkeeping replayed: every k-tile of the tail done exactly once, and the
 * partial slots the last contributor reads are exactly those written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dd_check.h"
#include "sk_plan.h"

/* Replays dmma_gemm_kernel's stream-K loop (kernels/dmma_gemm.cuh): CTA c
 * walks its share tile by tile; a segment that is not a whole tile writes
 * its slot. */
static void replay(long long tail, long long kt, long long ctas)
{
    const long long U = tail * kt;
    int *done = calloc((size_t)U, sizeof *done);
    long long *writer = malloc((size_t)(2 * ctas) * sizeof *writer); /* slot -> tile */
    long long *parts = calloc((size_t)tail, sizeof *parts);
    for (long long i = 0; i < 2 * ctas; ++i)
        writer[i] = -1;
    for (long long c = 0; c < ctas; ++c) {
        const long long u1 = dd_sk_begin(U, ctas, c + 1);
        long long u = dd_sk_begin(U, ctas, c);
        CHECK(u1 - u >= 1, "CTA %lld of %lld has an empty share (tail %lld, kt %lld)", c, ctas,
              tail, kt);
        while (u < u1) {
            const long long j = u / kt, kb = u - j * kt, ke = u1 - j * kt < kt ? u1 - j * kt : kt;
            for (long long x = kb; x < ke; ++x)
                done[j * kt + x]++;
            if (!(kb == 0 && ke == kt)) {
                const long long s = dd_sk_slot(U, ctas, c, j * kt);
                CHECK(s >= 2 * c && s <= 2 * c + 1, "CTA %lld writes slot %lld", c, s);
                CHECK(writer[s] < 0, "slot %lld written twice (tiles %lld, %lld)", s, writer[s],
                      j);
                writer[s] = j;
                parts[j]++;
            }
            u = (j + 1) * kt;
        }
    }
    for (long long x = 0; x < U; ++x)
        CHECK(done[x] == 1, "k-tile %lld of the tail done %d times (tail %lld kt %lld ctas %lld)",
              x, done[x], tail, kt, ctas);
    /* what the last contributor of each split tile reads */
    for (long long j = 0; j < tail; ++j) {
        const long long t0 = j * kt, lo = dd_sk_owner(U, ctas, t0),
                        hi = dd_sk_owner(U, ctas, t0 + kt - 1);
        CHECK(dd_sk_begin(U, ctas, lo) <= t0 && t0 < dd_sk_begin(U, ctas, lo + 1), "owner of %lld",
              t0);
        if (lo == hi) {
            CHECK(parts[j] == 0, "tile %lld has one contributor but %lld partials", j, parts[j]);
            continue;
        }
        CHECK(parts[j] == hi - lo + 1, "tile %lld: %lld partials, %lld contributors", j, parts[j],
              hi - lo + 1);
        for (long long p = lo; p <= hi; ++p) {
            const long long s = dd_sk_slot(U, ctas, p, t0);
            CHECK(writer[s] == j, "tile %lld reads slot %lld, written for tile %lld", j, s,
                  writer[s]);
        }
    }
    free(done);
    free(writer);
    free(parts);
}

static void plan_case(long long tiles, long long slots, long long kt)
{
    long long dp, tail, ctas;
    dd_sk_plan(tiles, slots, kt, &dp, &tail, &ctas);
    CHECK(dp + tail == tiles && dp >= 0 && tail >= 0, "tiles %lld = %lld + %lld", tiles, dp, tail);
    if (!ctas) {
        CHECK(tail == 0, "no stream-K CTAs but a tail of %lld", tail);
        return;
    }
    CHECK(ctas == slots, "%lld stream-K CTAs on %lld SMs", ctas, slots);
    CHECK(dp % slots == 0, "%lld whole tiles are not full waves of %lld", dp, slots);
    CHECK(tail * kt / ctas >= DD_SK_MIN_SHARE, "share %lld below the minimum", tail * kt / ctas);
    CHECK(tiles % slots != 0, "stream-K chosen with no partial wave (%lld / %lld)", tiles, slots);
    /* the makespan it promises is at least 1% under whole tiles' */
    const long long whole = (tiles + slots - 1) / slots * kt,
                    split = dp / slots * kt + (tail * kt + ctas - 1) / ctas;
    CHECK(split * 100 <= whole * 99, "split %lld vs whole %lld (tiles %lld kt %lld)", split, whole,
          tiles, kt);
    replay(tail, kt, ctas);
}

static void known(long long tiles, long long slots, long long kt, int want_split)
{
    long long dp, tail, ctas;
    dd_sk_plan(tiles, slots, kt, &dp, &tail, &ctas);
    CHECK((ctas > 0) == want_split, "%lld tiles on %lld SMs, %lld k-tiles: split %lld, want %d",
          tiles, slots, kt, ctas, want_split);
}

int main(void)
{
    /* H200 (132 SMs), 128×128 tiles, 16-deep k-tiles */
    known(4096, 132, 512, 1);   /* n = 8192: 31.03 waves of work in 32 */
    known(1024, 132, 256, 1);   /* n = 4096: 7.76 in 8 */
    known(4096, 132, 64, 1);    /* the 8192²×1024 panel */
    known(64, 132, 64, 1);      /* n = 1024: one part-filled wave */
    known(16384, 132, 1024, 0); /* n = 16384: 124.1 in 125, under 1% */
    known(1056, 132, 256, 0);   /* whole waves */
    known(4096, 132, 4, 0);     /* too shallow to share */
    known(0, 132, 64, 0);
    long long dp, tail, ctas;
    dd_sk_plan(4096, 132, 512, &dp, &tail, &ctas);
    CHECK(dp == 3960 && tail == 136, "n = 8192: %lld whole + %lld tail, want 3960 + 136", dp,
          tail);
    for (long long slots = 1; slots <= 140; slots += 3)
        for (long long tiles = 1; tiles <= 700; tiles += 7)
            for (long long kt = 1; kt <= 1100; kt = kt * 2 + 1)
                plan_case(tiles, slots, kt);
    for (long long tail = 1; tail <= 40; ++tail)
        for (long long kt = 1; kt <= 70; kt += 3)
            for (long long ctas = 1; ctas <= 2 * tail * kt && ctas <= 150; ctas += 5)
                if (tail * kt >= ctas)
                    replay(tail, kt, ctas);
    if (g_fail)
        fprintf(stderr, "%d failures\n", g_fail);
    else
        printf("sk_plan: all checks passed\n");
    return g_fail != 0;
}
