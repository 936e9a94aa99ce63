/* test_beta0.c — beta = 0 means C is not read (BLAS's rule), shown on the
 * pages themselves: C's local array lives in pages mapped PROT_NONE, and a
 * SIGSEGV handler tells reads from writes by the fault's error code (x86-64
 * Linux: bit 1 of REG_ERR set for a write).  A write opens its page (read
 * and write: the library may read back what it wrote); a read of a page
 * not yet written is a read of C's input and fails the test.  For every
 * host entry: dd_gemm, dd_pgemm on the in-place block-cyclic path and
 * through the redistribution, each with transa/transb in {N, T}, at any
 * rank count; the result is checked against the exact product, and with
 * beta = 1 on the same pages the reads must be seen (so the detector
 * itself is shown to work).  Elsewhere than x86-64 Linux: exit 77. */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define DD_CHECK_MPI
#include "dd_check.h"
#include "dgemm_dist.h"

#if defined(__x86_64__) && defined(__linux__)

enum { MAXPAGES = 1 << 12 };
static char *g_base;
static size_t g_page, g_npages;
static volatile sig_atomic_t g_written[MAXPAGES];
static volatile sig_atomic_t g_reads, g_writes, g_foreign;

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    char *a = si->si_addr;
    if (!g_base || a < g_base || a >= g_base + g_npages * g_page) {
        g_foreign = 1; /* a fault outside C: a real crash */
        signal(SIGSEGV, SIG_DFL);
        return;
    }
    size_t pg = (size_t)(a - g_base) / g_page;
    int write = (((ucontext_t *)ctx)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
    if (write) {
        g_written[pg] = 1;
        g_writes++;
    } else if (!g_written[pg]) {
        g_reads++;
    }
    mprotect(g_base + pg * g_page, g_page, PROT_READ | PROT_WRITE);
}

/* n doubles in fresh pages, NaN, then closed to every access. */
static double *guarded(size_t n)
{
    g_page = (size_t)sysconf(_SC_PAGESIZE);
    g_npages = (n * sizeof(double) + g_page - 1) / g_page;
    if (g_npages == 0)
        g_npages = 1;
    if (g_npages > MAXPAGES)
        return NULL;
    void *p = mmap(NULL, g_npages * g_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    for (size_t i = 0; i < g_npages * g_page / sizeof(double); i++)
        ((double *)p)[i] = NAN;
    for (size_t i = 0; i < g_npages; i++)
        g_written[i] = 0;
    g_reads = g_writes = 0;
    g_base = p;
    mprotect(p, g_npages * g_page, PROT_NONE);
    return p;
}

static void release(void)
{
    munmap(g_base, g_npages * g_page);
    g_base = NULL;
}

static double a_st(int64_t i, int64_t j)
{
    return (double)((i * 7 + j * 3 + 1) % 11 - 5) / 4;
}
static double b_st(int64_t i, int64_t j)
{
    return (double)((i * 5 + j * 2 + 3) % 13 - 6) / 8;
}

enum { M = 40, N = 300, K = 9 }; /* C's local arrays span several pages */

static double want(char ta, char tb, int64_t i, int64_t j)
{
    double s = 0;
    for (int64_t k = 0; k < K; k++)
        s += (ta == 'T' ? a_st(k, i) : a_st(i, k)) * (tb == 'T' ? b_st(j, k) : b_st(k, j));
    return 2 * s;
}

static int64_t start_of(int64_t n, int parts, int index)
{
    int64_t s = 0, len = 0;
    dd_block_range(n, parts, index, &s, &len);
    return s;
}

/* Local index l to the whole matrix's, block-cyclic (ScaLAPACK's INDXL2G). */
static int64_t l2g(int64_t l, int64_t nb, int me, int np)
{
    return (l / nb * np + me) * nb + l % nb;
}

/* One call on guarded C (beta = 0, or 1 to show the detector sees reads);
 * kind 0: dd_gemm, 1: dd_pgemm in place, 2: dd_pgemm redistributed. */
static void one(dd_context *ctx, int kind, char ta, char tb, double beta)
{
    int P, Q, p, q;
    dd_context_grid(ctx, &P, &Q, &p, &q);
    int64_t Ra = ta == 'T' ? K : M, Sa = ta == 'T' ? M : K, Rb = tb == 'T' ? N : K,
            Sb = tb == 'T' ? K : N;
    double *A, *B, *C;
    int64_t lda, ldb, ldc, cr, cc;
    dd_matrix_desc da, db, dc;
    /* kind 1 and 2 use blocks of 3 (2: with the grid in column order) */
    int64_t nb = 3;
    char order = kind == 2 ? 'C' : 'R';
    int pr = order == 'R' ? g_rank / Q : g_rank % P, pc = order == 'R' ? g_rank % Q : g_rank / P;
    if (kind == 0) {
        int64_t a0, ar, b0, bc, c0;
        dd_block_range(Ra, P, p, &a0, &ar);
        dd_block_range(Sa, Q, q, &b0, &bc);
        lda = bc + 1;
        A = calloc((size_t)(ar * lda + 1), sizeof *A);
        for (int64_t i = 0; i < ar; i++)
            for (int64_t j = 0; j < bc; j++)
                A[i * lda + j] = a_st(a0 + i, b0 + j);
        dd_block_range(Rb, P, p, &a0, &ar);
        dd_block_range(Sb, Q, q, &b0, &bc);
        ldb = bc + 1;
        B = calloc((size_t)(ar * ldb + 1), sizeof *B);
        for (int64_t i = 0; i < ar; i++)
            for (int64_t j = 0; j < bc; j++)
                B[i * ldb + j] = b_st(a0 + i, b0 + j);
        dd_block_range(M, P, p, &c0, &cr);
        dd_block_range(N, Q, q, &c0, &cc);
        ldc = cc + 2;
    } else {
        int64_t ar = dd_numroc(Ra, nb, pr, 0, P), ac = dd_numroc(Sa, nb, pc, 0, Q);
        int64_t br = dd_numroc(Rb, nb, pr, 0, P), bc = dd_numroc(Sb, nb, pc, 0, Q);
        cr = dd_numroc(M, nb, pr, 0, P), cc = dd_numroc(N, nb, pc, 0, Q);
        lda = ar > 0 ? ar : 1, ldb = br > 0 ? br : 1, ldc = cr > 0 ? cr : 1;
        dd_desc_block_cyclic(&da, Ra, Sa, nb, nb, 0, 0, P, Q, order, lda);
        dd_desc_block_cyclic(&db, Rb, Sb, nb, nb, 0, 0, P, Q, order, ldb);
        dd_desc_block_cyclic(&dc, M, N, nb, nb, 0, 0, P, Q, order, ldc);
        A = calloc((size_t)(lda * ac + 1), sizeof *A);
        B = calloc((size_t)(ldb * bc + 1), sizeof *B);
        for (int64_t j = 0; j < ac; j++)
            for (int64_t i = 0; i < ar; i++)
                A[j * lda + i] = a_st(l2g(i, nb, pr, P), l2g(j, nb, pc, Q));
        for (int64_t j = 0; j < bc; j++)
            for (int64_t i = 0; i < br; i++)
                B[j * ldb + i] = b_st(l2g(i, nb, pr, P), l2g(j, nb, pc, Q));
    }
    size_t cn = kind == 0 ? (size_t)(cr * ldc) : (size_t)(ldc * cc);
    C = guarded(cn);
    CHECK(C != NULL, "no guarded pages for %zu elements", cn);
    dd_status st = DD_ERROR_INTERNAL;
    if (C && kind == 0)
        st = dd_gemm(ctx, ta, tb, M, N, K, 2.0, A, lda, B, ldb, beta, C, ldc, NULL);
    else if (C)
        st = dd_pgemm(ctx, ta, tb, M, N, K, 2.0, A, 1, 1, &da, B, 1, 1, &db, beta, C, 1, 1, &dc,
                      NULL);
    static const char *kinds[] = {"dd_gemm", "dd_pgemm in place", "dd_pgemm redistributed"};
    long reads = g_reads, writes = g_writes;
    if (C && beta == 0) {
        CHECK(st == DD_SUCCESS, "%s %c%c: %s", kinds[kind], ta, tb, dd_context_last_error(ctx));
        CHECK(reads == 0, "%s %c%c beta = 0: C's input read (%ld page reads before any write)",
              kinds[kind], ta, tb, reads);
        CHECK(cr * cc == 0 || writes > 0, "%s %c%c: C never written", kinds[kind], ta, tb);
        int64_t bad = 0;
        mprotect(g_base, g_npages * g_page, PROT_READ | PROT_WRITE);
        for (int64_t i = 0; i < cr; i++)
            for (int64_t j = 0; j < cc; j++) {
                int64_t gi = kind == 0 ? start_of(M, P, p) + i : l2g(i, nb, pr, P);
                int64_t gj = kind == 0 ? start_of(N, Q, q) + j : l2g(j, nb, pc, Q);
                double got = kind == 0 ? C[i * ldc + j] : C[j * ldc + i];
                bad += !(got == want(ta, tb, gi, gj));
            }
        CHECK(bad == 0, "%s %c%c beta = 0: %lld elements of C wrong", kinds[kind], ta, tb,
              (long long)bad);
    } else if (C) {
        /* beta = 1 on NaN: the result is NaN, but the reads must have been seen */
        CHECK(cr * cc == 0 || reads > 0, "%s %c%c beta = 1: the detector saw no read of C",
              kinds[kind], ta, tb);
    }
    if (C)
        release();
    free(A), free(B);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    dd_context_options o;
    dd_context_options_init(&o);
    o.backend = "cpu";
    o.panel = 4;
    dd_context *ctx = NULL;
    char msg[512];
    if (dd_context_create(MPI_COMM_WORLD, &o, &ctx, msg, sizeof msg) != DD_SUCCESS) {
        if (g_rank == 0)
            fprintf(stderr, "test_beta0: %s\n", msg);
        MPI_Finalize();
        return 1;
    }
    static const char ops[] = {'N', 'T'};
    for (int kind = 0; kind < 3; kind++)
        for (int t = 0; t < 4; t++) {
            if (kind == 1 && t) /* the in-place path is for untransposed operands */
                continue;
            one(ctx, kind, ops[t / 2], ops[t % 2], 0);
            one(ctx, kind, ops[t / 2], ops[t % 2], 1);
        }
    CHECK(!g_foreign, "a fault outside C's pages");
    int fails = 0;
    MPI_Allreduce(&g_fail, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("test_beta0: %d failed assertions on %d ranks\n", fails, g_size);
    dd_context_destroy(ctx);
    MPI_Finalize();
    return fails != 0;
}

#else

int main(void)
{
    printf("SKIP: the read/write fault code is read on x86-64 Linux only\n");
    return 77;
}

#endif
