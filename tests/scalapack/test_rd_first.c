/* test_rd_first.c — the redistribution's first-block distribution
 * (RD_CYCLIC_FIRST, src/api/api_redist.h: PBLAS's DTYPE_ 2, a first block
 * of imb, then blocks of nb) against a plain walk of its definition.
 *
 * For every imb, nb in 1..9, np in 1..4, src in 0..np-1 and whole length
 * up to 40: deal the indices one by one (imb to src, then nb to each next
 * process in turn), numbering each process's own consecutively; then
 * rd_owner and rd_local of every index, rd_run (to the end of the index's
 * block, within the submatrix), and rd_held of every
 * prefix must say the same, also for submatrices (off, n) inside the
 * whole.  RD_CYCLIC against the same walk with imb = nb, too. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api_redist.h"
#include "dd_check.h"

enum { LEN = 40 };

/* rd_move's helpers (api_exchange.c, api_work.c), which this test never
 * reaches: stubs, so that api_redist.c links alone. */
int rd_exchange(MPI_Comm comm, MPI_Datatype dt, size_t es, const void *sbuf, const int64_t *scount,
                const int64_t *sdisp, void *rbuf, const int64_t *rcount, const int64_t *rdisp,
                dd_err *err)
{
    (void)comm, (void)dt, (void)es, (void)sbuf, (void)scount, (void)sdisp, (void)rbuf;
    (void)rcount, (void)rdisp, (void)err;
    return -1;
}

void rd_parallel(int threads, int64_t n, void (*fn)(void *arg, int64_t lo, int64_t hi), void *arg)
{
    (void)threads, (void)n, (void)fn, (void)arg;
}

int main(void)
{
    long checks = 0;
    for (int kind = 0; kind < 2; kind++)
        for (int imb = 1; imb <= 9; imb++)
            for (int nb = 1; nb <= 9; nb++)
                for (int np = 1; np <= 4; np++)
                    for (int src = 0; src < np; src++) {
                        int first = kind ? imb : nb; /* kind 1: RD_CYCLIC_FIRST */
                        if (!kind && imb > 1)
                            continue; /* RD_CYCLIC: once per nb */
                        int owner[LEN], local[LEN], block[LEN], count[4] = {0};
                        for (int g = 0, p = src, left = first, b = 0; g < LEN; g++) {
                            if (!left)
                                p = (p + 1) % np, left = nb, b++;
                            owner[g] = p;
                            block[g] = b;
                            local[g] = count[p]++;
                            left--;
                        }
                        for (int off = 0; off < LEN; off += 7)
                            for (int n = 1; off + n <= LEN; n += 5) {
                                rd_dist d = {kind ? RD_CYCLIC_FIRST : RD_CYCLIC,
                                             np,
                                             n,
                                             off,
                                             0,
                                             nb,
                                             src,
                                             kind ? imb : 0};
                                for (int g = 0; g < n; g++) {
                                    int G = off + g, run = 1;
                                    while (g + run < n && block[G + run] == block[G])
                                        run++;
                                    CHECK(rd_owner(&d, g) == owner[G] &&
                                              rd_local(&d, g) == local[G] && rd_run(&d, g) == run,
                                          "kind %d imb %d nb %d np %d src %d off %d n %d g %d: "
                                          "owner %d local %lld run %lld, want %d %d %d",
                                          kind, imb, nb, np, src, off, n, g, rd_owner(&d, g),
                                          (long long)rd_local(&d, g), (long long)rd_run(&d, g),
                                          owner[G], local[G], run);
                                    checks++;
                                }
                            }
                        rd_dist d = {kind ? RD_CYCLIC_FIRST : RD_CYCLIC,
                                     np,
                                     LEN,
                                     0,
                                     0,
                                     nb,
                                     src,
                                     kind ? imb : 0};
                        for (int me = 0; me < np; me++)
                            for (int x = 0; x <= LEN; x++) {
                                int want = 0;
                                for (int g = 0; g < x; g++)
                                    want += owner[g] == me;
                                CHECK(rd_held(&d, me, x) == want,
                                      "kind %d imb %d nb %d np %d src %d: rd_held(%d, %d) = %lld, "
                                      "want %d",
                                      kind, imb, nb, np, src, me, x, (long long)rd_held(&d, me, x),
                                      want);
                                checks++;
                            }
                    }
    printf("test_rd_first: %ld checks, %d failed assertions, %s\n", checks, g_fail,
           g_fail ? "FAILED" : "all passed");
    return g_fail != 0;
}
