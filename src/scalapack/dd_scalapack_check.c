/* dd_scalapack_check.c — the drop-in's checks of its arguments, as PBLAS
 * makes them, and the refusal of an illegal one, as PBLAS reports it
 * (dd_scalapack.c calls them before it serves or hands on a call).
 *
 * Illegal arguments: PBLAS's checks (PDGEMM's, in its order:
 * dropin_pblas_verdict), made on each process and agreed over the grid
 * (dropin_agree: the lowest number wins), are reported as PBLAS reports
 * them: PB_Cabort(ctxt, "PDGEMM", -number) on every process, after one
 * line from the process that found it saying what to change.  ScaLAPACK's
 * PB_Cabort aborts the job, as with ScaLAPACK itself; the library never
 * aborts by itself: without a PB_Cabort, or with DD_SCALAPACK_ERRORS=return,
 * the call returns with C untouched (dd_scalapack_last_info).  A process
 * whose DESCA names no grid it is in, or whose descriptors name a bad type
 * or different contexts, has no communicator to agree on: it reports at
 * once, alone.  Never PXERBLA: PBLAS does not call it. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "dd_knobs.h"
#include "dd_scalapack_impl.h"

/* PBLAS's numbers (as its checker PB_Cchkmat gives them): the argument at
 * position i of PDGEMM's list is i; entry j of the descriptor at position
 * i is 100 * i + j, j counted in PBLAS's 11-entry internal descriptor,
 * into which a 9-entry one (DTYPE_ 1) goes with IMB_ = MB_ and INB_ = NB_. */
enum { E_DTYPE = 1, E_CTXT, E_M, E_N, E_IMB, E_INB, E_MB, E_NB, E_RSRC, E_CSRC, E_LLD };
static const char *const arg_names[20] = {
    "",      "TRANSA", "TRANSB", "M",  "N",     "K",    "ALPHA", "A",  "IA", "JA",
    "DESCA", "B",      "IB",     "JB", "DESCB", "BETA", "C",     "IC", "JC", "DESCC"};
static const char *const entry_names[12] = {
    "", "DTYPE_", "CTXT_", "M_", "N_", "IMB_, or MB_ of a 9-entry descriptor",
    "INB_, or NB_ of a 9-entry descriptor", "MB_", "NB_", "RSRC_", "CSRC_", "LLD_"};

/* An illegal argument, PBLAS's way: number is what PBLAS passes negated
 * to PB_Cabort (100 * position + entry for a descriptor's entry, else the
 * position); our line (PB_Cabort's wording, then why) from the printer. */
void dropin_refuse(int ictxt, const char *name, int number, int printer, const char *why)
{
    dropin_refused++;
    dropin_last_info = -number;
    if (printer) {
        int i = number / 100, j = number % 100;
        if (i >= 1 && i < 20 && j >= 1 && j < 12)
            fprintf(stderr,
                    "dgemm-dist-scalapack: %s: parameter number %d (%s), entry number %d (%s) had "
                    "an illegal value: %s\n",
                    name, i, arg_names[i], j, entry_names[j], why);
        else
            fprintf(stderr,
                    "dgemm-dist-scalapack: %s: parameter number %d (%s) had an illegal value: %s\n",
                    name, number, number >= 1 && number < 20 ? arg_names[number] : "?", why);
    }
    if (PB_Cabort && dd_knob_int(DDK_SCALAPACK_ERRORS) == 0)
        PB_Cabort(ictxt, name, -number);
}

__attribute__((format(printf, 3, 4))) static void fault(verdict *v, int code, const char *fmt,
                                                       ...)
{
    if (code >= v->code)
        return;
    v->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->why, sizeof v->why, fmt, ap);
    va_end(ap);
}

/* How many of n rows (or columns) dealt as a first block of imb, then
 * blocks of nb, cyclically over np processes from src, process me holds:
 * all of them when src is -1 (replicated) or np is 1 (PBLAS's Mnumroc from
 * the first index).  imb, nb >= 1. */
static int64_t held(int64_t n, int64_t imb, int64_t nb, int me, int src, int np)
{
    if (src < 0 || np <= 1)
        return n;
    int64_t dist = ((int64_t)me - src + np) % np;
    if (n <= imb)
        return dist == 0 ? n : 0;
    int64_t rest = n - imb, full = rest / nb, part = rest % nb, count = dist == 0 ? imb : 0;
    int64_t first = (dist + np - 1) % np; /* block b after the first lies on (b + 1) mod np */
    if (full > first)
        count += ((full - 1 - first) / np + 1) * nb;
    if (part && (full + 1) % np == dist)
        count += part;
    return count;
}

/* PB_Cchkmat's checks of sub(X), m x n at (ia, ja), described by desc at
 * position dpos (ia, ja at dpos - 2, dpos - 1), m and n at mpos, npos. */
static void check_matrix(verdict *v, const pgrid *g, const char *X, int64_t m, int mpos, int64_t n,
                         int npos, int ia, int ja, const int *desc, int dpos)
{
    const pdesc d = pdesc_of(desc);
    int at = dpos * 100;
    if (m < 0)
        fault(v, mpos * 100, "%s = %lld: must be at least 0", arg_names[mpos], (long long)m);
    if (n < 0)
        fault(v, npos * 100, "%s = %lld: must be at least 0", arg_names[npos], (long long)n);
    if (ia < 1)
        fault(v, (dpos - 2) * 100, "I%s = %d: must be at least 1", X, ia);
    if (ja < 1)
        fault(v, (dpos - 1) * 100, "J%s = %d: must be at least 1", X, ja);
    if (d.dtype != 1 && d.dtype != 2) { /* PBLAS stops checking this operand here */
        fault(v, at + E_DTYPE, "DESC%s's DTYPE_ = %d: PBLAS takes 1 (or 2, the 11-entry form)", X,
              d.dtype);
        return;
    }
    if (d.ctxt != g->ictxt) { /* ... and here */
        fault(v, at + E_CTXT,
              "DESC%s's CTXT_ = %d is not DESCA's (%d): A, B and C must share one BLACS context",
              X, d.ctxt, g->ictxt);
        return;
    }
    const char *mb = d.dtype == 1 ? "MB_" : "IMB_", *nb = d.dtype == 1 ? "NB_" : "INB_";
    if (d.imb < 1)
        fault(v, at + E_IMB, "DESC%s's %s = %d: must be at least 1", X, mb, d.imb);
    if (d.inb < 1)
        fault(v, at + E_INB, "DESC%s's %s = %d: must be at least 1", X, nb, d.inb);
    if (d.mb < 1)
        fault(v, at + E_MB, "DESC%s's MB_ = %d: must be at least 1", X, d.mb);
    if (d.nb < 1)
        fault(v, at + E_NB, "DESC%s's NB_ = %d: must be at least 1", X, d.nb);
    if (d.rsrc < -1 || d.rsrc >= g->nprow)
        fault(v, at + E_RSRC, "DESC%s's RSRC_ = %d: must be -1 or a grid row, 0..%d", X, d.rsrc,
              g->nprow - 1);
    if (d.csrc < -1 || d.csrc >= g->npcol)
        fault(v, at + E_CSRC, "DESC%s's CSRC_ = %d: must be -1 or a grid column, 0..%d", X,
              d.csrc, g->npcol - 1);
    if (m == 0 || n == 0) { /* sub(X) empty: M_, N_ >= 0 and LLD_ >= 1 only */
        if (d.m < 0)
            fault(v, at + E_M, "DESC%s's M_ = %d: must be at least 0", X, d.m);
        if (d.n < 0)
            fault(v, at + E_N, "DESC%s's N_ = %d: must be at least 0", X, d.n);
        if (d.lld < 1)
            fault(v, at + E_LLD, "DESC%s's LLD_ = %d: must be at least 1", X, d.lld);
        return;
    }
    if (d.m < 1)
        fault(v, at + E_M, "DESC%s's M_ = %d: must be at least 1 (sub(%s) is not empty)", X, d.m,
              X);
    if (d.n < 1)
        fault(v, at + E_N, "DESC%s's N_ = %d: must be at least 1 (sub(%s) is not empty)", X, d.n,
              X);
    if (d.m >= 1 && d.n >= 1) {
        if ((int64_t)ia - 1 + m > d.m)
            fault(v, (dpos - 2) * 100,
                  "I%s = %d: the submatrix's %lld rows from there must lie in DESC%s's M_ = %d", X,
                  ia, (long long)m, X, d.m);
        if ((int64_t)ja - 1 + n > d.n)
            fault(v, (dpos - 1) * 100,
                  "J%s = %d: the submatrix's %lld columns from there must lie in DESC%s's N_ = %d",
                  X, ja, (long long)n, X, d.n);
    }
    if (v->code != NONE) /* PBLAS looks at LLD_ only when all else is right */
        return;
    int64_t np = held(d.m, d.imb, d.mb, g->myrow, d.rsrc, g->nprow);
    if (d.lld >= (np > 1 ? np : 1))
        return;
    if (d.lld < 1)
        fault(v, at + E_LLD, "DESC%s's LLD_ = %d: must be at least 1", X, d.lld);
    else if (held(d.n, d.inb, d.nb, g->mycol, d.csrc, g->npcol) > 0)
        fault(v, at + E_LLD, "DESC%s's LLD_ = %d: must be at least %lld, the local rows here", X,
              d.lld, (long long)np);
}

/* PBLAS's verdict on this process for the whole call: PDGEMM's checks as
 * PBLAS's PDGEMM runs them (each local), the lowest code winning. */
void dropin_pblas_verdict(const pcall *p, verdict *v)
{
    *v = (verdict){NONE, ""};
    pgrid g;
    if (!grid_of(p->desca[1], &g)) {
        fault(v, 1000 + E_CTXT,
              "DESCA's CTXT_ = %d is no BLACS grid this process is in (a grid's processes get "
              "-1 as its handle when it leaves them out; this is another value, or the grid was "
              "released by BLACS_GRIDEXIT)",
              p->desca[1]);
        return;
    }
    char ta = *p->ta >= 'a' && *p->ta <= 'z' ? (char)(*p->ta - 32) : *p->ta;
    char tb = *p->tb >= 'a' && *p->tb <= 'z' ? (char)(*p->tb - 32) : *p->tb;
    int nota = ta == 'N', notb = tb == 'N';
    if (!nota && ta != 'T' && ta != 'C')
        fault(v, 100, "TRANSA = '%c': must be 'N', 'T' or 'C'", ta >= 32 && ta < 127 ? ta : '?');
    else if (!notb && tb != 'T' && tb != 'C')
        fault(v, 200, "TRANSB = '%c': must be 'N', 'T' or 'C'", tb >= 32 && tb < 127 ? tb : '?');
    if (nota)
        check_matrix(v, &g, "A", *p->m, 3, *p->k, 5, *p->ia, *p->ja, p->desca, 10);
    else
        check_matrix(v, &g, "A", *p->k, 5, *p->m, 3, *p->ia, *p->ja, p->desca, 10);
    if (notb)
        check_matrix(v, &g, "B", *p->k, 5, *p->n, 4, *p->ib, *p->jb, p->descb, 14);
    else
        check_matrix(v, &g, "B", *p->n, 4, *p->k, 5, *p->ib, *p->jb, p->descb, 14);
    check_matrix(v, &g, "C", *p->m, 3, *p->n, 4, *p->ic, *p->jc, p->descc, 19);
}

/* Who prints a refusal made here without a grid to agree on: process
 * (0, 0) of DESCA's grid, else of DESCB's or DESCC's where this process
 * is in one, else MPI_COMM_WORLD's rank 0. */
int dropin_local_printer(const pcall *p)
{
    const int *d[3] = {p->desca, p->descb, p->descc};
    for (int i = 0; i < 3; i++) {
        pgrid g;
        if (grid_of(d[i][1], &g))
            return g.myrow == 0 && g.mycol == 0;
    }
    int up = 0, down = 0, rank = 0;
    if (MPI_Initialized(&up) != MPI_SUCCESS || !up || MPI_Finalized(&down) != MPI_SUCCESS ||
        down || MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS)
        return 1;
    return rank == 0;
}

/* The verdict and the first blocks agreed over the grid (one reduction):
 * the lowest code and the lowest rank that found it, and whether every
 * process describes each operand's first block alike. */
int dropin_agree(MPI_Comm comm, const verdict *v, const pdesc d[3], agreed *out)
{
    static const int pos[3] = {10, 14, 19};
    int rank = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return 0;
    int64_t x[13];
    x[0] = v->code == NONE ? INT64_MAX : ((int64_t)v->code << 32) | (uint32_t)rank;
    for (int k = 0; k < 3; k++) {
        x[1 + 4 * k] = d[k].imb, x[2 + 4 * k] = -(int64_t)d[k].imb;
        x[3 + 4 * k] = d[k].inb, x[4 + 4 * k] = -(int64_t)d[k].inb;
    }
    int64_t y[13];
    if (MPI_Allreduce(x, y, 13, MPI_INT64_T, MPI_MIN, comm) != MPI_SUCCESS)
        return 0;
    *out = (agreed){NONE, -1, 0};
    if (y[0] != INT64_MAX)
        out->code = (int)(y[0] >> 32), out->rank = (int)(y[0] & 0xffffffff);
    for (int k = 2; k >= 0; k--) { /* the lowest number last */
        if (y[3 + 4 * k] != -y[4 + 4 * k])
            out->first_differs = pos[k] * 100 + E_INB;
        if (y[1 + 4 * k] != -y[2 + 4 * k])
            out->first_differs = pos[k] * 100 + E_IMB;
    }
    return 1;
}
