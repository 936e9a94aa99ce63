/* test_grid.c — the distribution arithmetic, exhaustively over small sizes:
 * every element of A, B and C owned exactly once, blocks differing by at most
 * one, owners consistent with blocks, panels covering K exactly once, never
 * wider than NB and never crossing a block boundary of either K partition. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dd_check.h"
#include "grid.h"

static void blocks(int64_t n, int parts)
{
    int64_t next = 0, lo = n, hi = 0;
    for (int i = 0; i < parts; i++) {
        dd_range r = grid_block(n, parts, i);
        CHECK(r.start == next, "block %d of %lld/%d starts at %lld, expected %lld", i,
              (long long)n, parts, (long long)r.start, (long long)next);
        for (int64_t k = r.start; k < r.start + r.len; k++)
            CHECK(grid_owner(n, parts, k) == i, "owner of %lld in %lld/%d", (long long)k,
                  (long long)n, parts);
        next = r.start + r.len;
        lo = r.len < lo ? r.len : lo;
        hi = r.len > hi ? r.len : hi;
    }
    CHECK(next == n, "blocks of %lld/%d cover %lld", (long long)n, parts, (long long)next);
    CHECK(hi - lo <= 1, "blocks of %lld/%d differ by %lld", (long long)n, parts,
          (long long)(hi - lo));
}

/* every element of an R×C matrix cut P ways by rows and Q ways by cols */
static void ownership(int64_t R, int64_t C, int P, int Q)
{
    int *seen = calloc((size_t)(R * C + 1), sizeof *seen);
    for (int r = 0; r < P * Q; r++) {
        dd_grid g = grid_make(P, Q, r);
        CHECK(g.p * Q + g.q == r && g.p < P && g.q < Q, "grid_make %d in %dx%d", r, P, Q);
        dd_range rr = grid_block(R, P, g.p), rc = grid_block(C, Q, g.q);
        for (int64_t i = rr.start; i < rr.start + rr.len; i++)
            for (int64_t j = rc.start; j < rc.start + rc.len; j++)
                seen[i * C + j]++;
    }
    for (int64_t x = 0; x < R * C; x++)
        CHECK(seen[x] == 1, "element %lld of %lldx%lld on %dx%d owned %d times", (long long)x,
              (long long)R, (long long)C, P, Q, seen[x]);
    free(seen);
}

/* The driver's panel list (grid_panels), as summa_setup builds it. */
static void panels(int64_t K, int P, int Q, int64_t nb)
{
    int64_t first = grid_first_width(P, Q, nb);
    int64_t n = grid_panels(K, P, Q, nb, NULL), k0 = 0;
    CHECK(n >= 1 && n <= K, "panel count %lld for K=%lld", (long long)n, (long long)K);
    if (n < 1 || n > K)
        return;
    dd_panel *list = calloc((size_t)n, sizeof *list);
    CHECK(grid_panels(K, P, Q, nb, list) == n, "same count when filling the list");
    for (int64_t t = 0; t < n; t++) {
        dd_panel p = list[t];
        int64_t cap = t == 0 ? first : nb;
        CHECK(p.k0 == k0, "panel %lld starts at %lld, expected %lld (K=%lld %dx%d nb=%lld)",
              (long long)t, (long long)p.k0, (long long)k0, (long long)K, P, Q, (long long)nb);
        CHECK(p.w >= 1 && p.w <= cap, "panel %lld width %lld with cap %lld", (long long)t,
              (long long)p.w, (long long)cap);
        dd_range ra = grid_block(K, Q, p.qa), rb = grid_block(K, P, p.pb);
        CHECK(p.k0 >= ra.start && p.k0 + p.w <= ra.start + ra.len,
              "panel [%lld,%lld) leaves A's column block %d", (long long)p.k0,
              (long long)(p.k0 + p.w), p.qa);
        CHECK(p.k0 >= rb.start && p.k0 + p.w <= rb.start + rb.len,
              "panel [%lld,%lld) leaves B's row block %d", (long long)p.k0,
              (long long)(p.k0 + p.w), p.pb);
        CHECK(p.a_off == p.k0 - ra.start && p.b_off == p.k0 - rb.start, "panel offsets");
        k0 += p.w;
    }
    CHECK(k0 == K, "panels cover %lld of K=%lld", (long long)k0, (long long)K);
    free(list);
}

int main(void)
{
    for (int64_t n = 1; n <= 40; n++)
        for (int parts = 1; parts <= 9; parts++)
            blocks(n, parts);
    for (int64_t R = 1; R <= 9; R++)
        for (int64_t C = 1; C <= 9; C++)
            for (int P = 1; P <= 4; P++)
                for (int Q = 1; Q <= 4; Q++)
                    ownership(R, C, P, Q);
    for (int64_t K = 1; K <= 30; K++)
        for (int P = 1; P <= 5; P++)
            for (int Q = 1; Q <= 5; Q++)
                for (int64_t nb = 1; nb <= 9; nb++)
                    panels(K, P, Q, nb);
    /* narrow first panels, and widths whose k0 + nb would overflow */
    for (int64_t K = 1; K <= 3000; K += 499)
        for (int P = 1; P <= 3; P++)
            for (int Q = 1; Q <= 3; Q++) {
                panels(K, P, Q, 256);
                panels(K, P, Q, 2048);
                panels(K, P, Q, INT64_MAX);
            }
    CHECK(grid_panels(10, 1, 1, 0, NULL) == -1, "panel width 0 is refused, not looped on");
    CHECK(grid_panels(10, 1, 1, -5, NULL) == -1, "negative panel width is refused");
    CHECK(grid_panels(0, 2, 2, 8, NULL) == 0, "K = 0 has no panels");
    /* the narrow first panel: NB/8, at least 128, only with several ranks */
    CHECK(grid_first_width(1, 1, 2048) == 2048, "one rank keeps the full first panel");
    CHECK(grid_first_width(1, 2, 2048) == 256, "2048/8");
    CHECK(grid_first_width(2, 2, 512) == 128, "at least 128");
    CHECK(grid_first_width(2, 1, 100) == 100, "narrow panels stay");
    panels(5000, 2, 3, 2048);
    /* default grids: P <= Q, P·Q = n, most nearly square */
    int expect[][3] = {{1, 1, 1}, {2, 1, 2},  {3, 1, 3}, {4, 2, 2},  {6, 2, 3},
                       {8, 2, 4}, {12, 3, 4}, {7, 1, 7}, {16, 4, 4}, {18, 3, 6}};
    for (size_t i = 0; i < sizeof expect / sizeof *expect; i++) {
        int P, Q;
        grid_default(expect[i][0], &P, &Q);
        CHECK(P == expect[i][1] && Q == expect[i][2], "grid_default(%d) = %dx%d, expected %dx%d",
              expect[i][0], P, Q, expect[i][1], expect[i][2]);
    }
    if (g_fail) {
        fprintf(stderr, "%d failures\n", g_fail);
        return 1;
    }
    printf("grid: all distribution checks passed\n");
    return 0;
}
