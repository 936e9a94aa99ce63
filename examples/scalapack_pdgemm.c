/* scalapack_pdgemm.c — a plain ScaLAPACK program: a BLACS grid, block-
 * cyclic A, B, C (descinit_), C = A·B by pdgemm_, each process checking
 * its elements of C against the exact product.  It knows nothing of
 * dgemm-dist: linked against ScaLAPACK alone it runs ScaLAPACK's pdgemm;
 * linked with -ldgemm-dist-scalapack BEFORE ScaLAPACK, dgemm-dist's.
 *
 *   mpirun -n 4 ./scalapack_pdgemm [n nb]
 *
 * Prints PASSED (grid process (0,0)) and exits 0 when every element is
 * right.  DD_SCALAPACK_VERBOSE=1 makes the drop-in say it served the call. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

void Cblacs_pinfo(int *me, int *np);
void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc, const int *np);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *rsrc, const int *csrc, const int *ctxt, const int *lld, int *info);
void pdgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc);

/* small integers: every product and sum is exact */
static double a_at(int i, int k)
{
    return (double)((i + 2 * k) % 5 - 2);
}
static double b_at(int k, int j)
{
    return (double)((3 * k + j) % 4) - 1.5;
}

/* global index of local index l (block size nb, my coordinate me of np, first block at 0) */
static int global(int l, int nb, int me, int np)
{
    return (l / nb * np + me) * nb + l % nb;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 2 ? atoi(argv[1]) : 300, nb = argc > 2 ? atoi(argv[2]) : 32;
    int me, np, ctxt, P = 1, Q, pr, pc, zero = 0, one = 1, info;
    Cblacs_pinfo(&me, &np);
    for (int p = 1; p * p <= np; p++)
        if (np % p == 0)
            P = p;
    Q = np / P;
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "Row-major", P, Q);
    Cblacs_gridinfo(ctxt, &P, &Q, &pr, &pc);
    int lr = numroc_(&n, &nb, &pr, &zero, &P), lc = numroc_(&n, &nb, &pc, &zero, &Q);
    int lld = lr > 1 ? lr : 1, desc[9];
    descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
    size_t len = (size_t)lld * (size_t)(lc > 1 ? lc : 1);
    double *A = malloc(len * sizeof *A), *B = malloc(len * sizeof *B), *C = calloc(len, sizeof *C);
    for (int c = 0; c < lc; c++)
        for (int r = 0; r < lr; r++) {
            int i = global(r, nb, pr, P), j = global(c, nb, pc, Q);
            A[(size_t)c * lld + r] = a_at(i, j);
            B[(size_t)c * lld + r] = b_at(i, j);
        }
    double alpha = 1, beta = 0;
    pdgemm_("N", "N", &n, &n, &n, &alpha, A, &one, &one, desc, B, &one, &one, desc, &beta, C,
            &one, &one, desc);
    long bad = 0, all = 0;
    for (int c = 0; c < lc; c++)
        for (int r = 0; r < lr; r++) {
            int i = global(r, nb, pr, P), j = global(c, nb, pc, Q);
            double want = 0;
            for (int k = 0; k < n; k++)
                want += a_at(i, k) * b_at(k, j);
            bad += C[(size_t)c * lld + r] != want;
        }
    MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (pr == 0 && pc == 0)
        printf("%s\n", all ? "FAILED" : "PASSED");
    free(A), free(B), free(C);
    Cblacs_gridexit(ctxt);
    MPI_Finalize();
    return all != 0;
}
