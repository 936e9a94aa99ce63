/* io_probe.c — the input probe (io.h): rank 0 opens the input read-only,
 * checks that A and B (and C's input, for beta ≠ 0) are matrices that fit
 * together as GEMM's flags say, and broadcasts its verdict and the sizes,
 * so every rank returns the same rc and message.  What a dataset's links
 * and sources must be: io_probe_links.c, io_probe_sources.c. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <hdf5.h>

#include "io.h"
#include "io_h5.h"
#include "io_probe_impl.h"

typedef struct {
    int64_t rows, cols;
    dd_dtype type;
} probe_mat;

/* Checks one matrix dataset; `label` is "A", "B" or "C", `name` its name in the file. */
static int probe_matrix(hid_t file, const char *path, const char *label, const char *name,
                        probe_mat *m, dd_err *err)
{
    io_h5_guard g;
    hid_t apl = io_h5_guard_apl(&g);
    if (apl < 0)
        return dd_fail(err, DD_EIO, "cannot make an HDF5 access property list for %s", path);
    hid_t obj = H5I_INVALID_HID;
    int there = io_h5_link_exists(file, name, apl);
    if (there)
        obj = H5Oopen(file, name, apl);
    if (obj < 0) {
        int rc = io_probe_unreachable(file, path, label, name, apl, &g, !there, err);
        H5Pclose(apl);
        return rc;
    }
    H5Pclose(apl);
    int rc = DD_OK;
    int64_t dims[2] = {0, 0};
    if (H5Iget_type(obj) != H5I_DATASET)
        rc = dd_fail(err, DD_EUSAGE,
                     "\"%s\" in input file %s is not a dataset (a group?); matrix %s must be a "
                     "2-D dataset",
                     name, path, label);
    else
        rc = io_h5_check_matrix(obj, path, name, label, dims, &m->type, NULL, err);
    if (rc == DD_OK && (dims[0] == 0 || dims[1] == 0))
        rc = dd_fail(err, DD_EUSAGE,
                     "dataset %s (\"%s\" in %s) is %lld×%lld; dgemm-dist needs a non-empty matrix",
                     label, name, path, (long long)dims[0], (long long)dims[1]);
    if (rc == DD_OK)
        rc = io_probe_check_external(obj, path, label, name, err);
    if (rc == DD_OK)
        rc = io_probe_check_virtual(obj, path, label, name, 0, err);
    m->rows = dims[0];
    m->cols = dims[1];
    H5Oclose(obj);
    return rc;
}

/* The file itself: there, readable, HDF5; then opened read-only. */
static int open_input(const char *path, hid_t *file, dd_err *err)
{
    struct stat st;
    if (path == NULL || path[0] == '\0')
        return dd_fail(err, DD_EUSAGE, "no input file given; pass --in FILE");
    if (stat(path, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return dd_fail(err, DD_EUSAGE, "cannot open input file %s: no such file", path);
        return dd_fail(err, DD_EIO, "cannot open input file %s: %s", path, strerror(errno));
    }
    if (S_ISDIR(st.st_mode))
        return dd_fail(err, DD_EUSAGE, "input %s is a directory, not an HDF5 file", path);
    /* before anything opens it: open(2) of a FIFO waits for a writer for ever */
    if (!S_ISREG(st.st_mode))
        return dd_fail(err, DD_EUSAGE,
                       "input %s is %s, not a regular file; dgemm-dist reads HDF5 files only", path,
                       io_h5_file_kind((unsigned)st.st_mode));
    if (access(path, R_OK) != 0)
        return dd_fail(err, DD_EIO, "cannot open input file %s: %s", path, strerror(errno));
#if H5_VERSION_GE(1, 12, 0)
    htri_t is = H5Fis_accessible(path, H5P_DEFAULT);
#else
    htri_t is = H5Fis_hdf5(path);
#endif
    if (is == 0)
        return dd_fail(err, DD_EUSAGE, "input file %s is not an HDF5 file", path);
    if (is < 0)
        return dd_fail(err, DD_EIO, "cannot read input file %s to check that it is HDF5", path);
    *file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    int rc = *file < 0 ? io_h5_explain_open(path, err) : DD_OK;
    if (*file < 0 && rc == DD_OK)
        rc =
            dd_fail(err, DD_EIO, "cannot open input file %s with HDF5; is the file damaged?", path);
    return rc;
}

/* "--transa T --order col" (the options that differ from the defaults), or "" */
static void layout_words(const dd_probe_gemm *g, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s%s",
             g->transa == 'T'   ? " --transa T"
             : g->transa == 'C' ? " --transa C"
                                : "",
             g->transb == 'T'   ? " --transb T"
             : g->transb == 'C' ? " --transb C"
                                : "",
             g->col ? " --order col" : "");
}

/* "f64", "c128 (complex)": an element type in a message. */
static const char *type_words(dd_dtype t)
{
    return t == DD_C128 ? "c128 (complex)" : t == DD_C64 ? "c64 (complex)" : dd_dtype_name(t);
}

/* op(A) M×K and op(B) K×N from the stored shapes; their K must agree. */
static int fit_ab(const char *path, const dd_probe_gemm *g, const probe_mat *ma,
                  const probe_mat *mb, int64_t mnk[3], dd_err *err)
{
    /* 'C' (the conjugate transpose) is stored as 'T' is */
    int ta = (g->transa != 'N') != (g->col != 0), tb = (g->transb != 'N') != (g->col != 0);
    int64_t am = ta ? ma->cols : ma->rows, ak = ta ? ma->rows : ma->cols;
    int64_t bk = tb ? mb->cols : mb->rows, bn = tb ? mb->rows : mb->cols;
    char words[64];
    layout_words(g, words, sizeof words);
    if (ma->type != mb->type)
        return dd_fail(err, DD_EUSAGE,
                       "A is %s but B is %s in %s; store both with the same element type%s",
                       type_words(ma->type), type_words(mb->type), path,
                       dd_dtype_complex(ma->type) != dd_dtype_complex(mb->type)
                           ? " (dgemm-dist multiplies complex by complex and real by real)"
                           : "");
    if (ak != bk && !words[0])
        return dd_fail(
            err, DD_EUSAGE, "A is %lld×%lld but B is %lld×%lld: A's columns must equal B's rows",
            (long long)ma->rows, (long long)ma->cols, (long long)mb->rows, (long long)mb->cols);
    if (ak != bk)
        return dd_fail(err, DD_EUSAGE,
                       "%s: op(B) is %lld×%lld but op(A) has %lld columns (A is stored %lld×%lld "
                       "and B %lld×%lld in %s); op(A)'s columns must equal op(B)'s rows: check "
                       "--transa, --transb and --order",
                       words + 1, (long long)bk, (long long)bn, (long long)ak, (long long)ma->rows,
                       (long long)ma->cols, (long long)mb->rows, (long long)mb->cols, path);
    mnk[0] = am;
    mnk[1] = bn;
    mnk[2] = ak;
    return DD_OK;
}

/* C's input (beta ≠ 0): there, of A's type, M×N as stored (N×M with col). */
static int probe_c(hid_t file, const char *path, const dd_probe_gemm *g, dd_dtype type,
                   const int64_t mnk[3], dd_err *err)
{
    probe_mat mc;
    /* absent, as opposed to behind a link that leads nowhere (probe_matrix says which) */
    io_h5_guard gd;
    hid_t apl = io_h5_guard_apl(&gd);
    int there = 0, broken = 0;
    if (apl >= 0) {
        char why[DD_ERRLEN];
        there = io_h5_link_exists(file, g->c, apl);
        broken = !there &&
                 (gd.err.msg[0] || io_probe_broken_link(file, path, g->c, apl, why, sizeof why, 0));
        H5Pclose(apl);
    }
    if (!there && !broken) {
        char beta[64]; /* --beta as given: RE, RE+IMi or IMi */
        if (g->beta_im == 0)
            snprintf(beta, sizeof beta, "%g", g->beta);
        else if (g->beta == 0)
            snprintf(beta, sizeof beta, "%gi", g->beta_im);
        else
            snprintf(beta, sizeof beta, "%g%+gi", g->beta, g->beta_im);
        return dd_fail(err, DD_EUSAGE,
                       "--beta %s needs C's input, but input file %s has no dataset \"%s\": name "
                       "it with --c, or use --beta 0 (C = alpha·op(A)·op(B))",
                       beta, path, g->c);
    }
    int rc = probe_matrix(file, path, "C", g->c, &mc, err);
    int64_t rows = g->col ? mnk[1] : mnk[0], cols = g->col ? mnk[0] : mnk[1];
    if (!rc && mc.type != type)
        rc = dd_fail(err, DD_EUSAGE,
                     "C (\"%s\" in %s) is %s but A and B are %s; store C with their element "
                     "type",
                     g->c, path, type_words(mc.type), type_words(type));
    if (!rc && (mc.rows != rows || mc.cols != cols))
        rc = dd_fail(err, DD_EUSAGE,
                     "C (\"%s\" in %s) is stored %lld×%lld but op(A)·op(B) is %lld×%lld, so C "
                     "must be stored %lld×%lld%s",
                     g->c, path, (long long)mc.rows, (long long)mc.cols, (long long)mnk[0],
                     (long long)mnk[1], (long long)rows, (long long)cols,
                     g->col ? " (its transpose: --order col)" : "");
    return rc;
}

static int probe_local(const char *path, const dd_probe_gemm *g, int complex_ok, int64_t mnk[3],
                       dd_dtype *type, dd_err *err)
{
    hid_t file = -1;
    int rc = open_input(path, &file, err);
    if (rc)
        return rc;
    probe_mat ma, mb;
    rc = probe_matrix(file, path, "A", g->a, &ma, err);
    if (rc == DD_OK)
        rc = probe_matrix(file, path, "B", g->b, &mb, err);
    if (rc == DD_OK)
        rc = fit_ab(path, g, &ma, &mb, mnk, err);
    if (rc == DD_OK && dd_dtype_complex(ma.type) && !complex_ok)
        rc = dd_fail(err, DD_EUSAGE,
                     "A and B in %s are %s: this program multiplies real matrices only (f64, "
                     "f32); store them as real floats",
                     path, type_words(ma.type));
    if (rc == DD_OK && g->need_c)
        rc = probe_c(file, path, g, ma.type, mnk, err);
    *type = ma.type;
    if (H5Fclose(file) < 0 && rc == DD_OK)
        rc = dd_fail(err, DD_EIO, "cannot close input file %s after checking it", path);
    return rc;
}

static int probe_gemm(MPI_Comm comm, const char *path, const dd_probe_gemm *g, int complex_ok,
                      int64_t *M, int64_t *N, int64_t *K, dd_dtype *type, dd_err *err)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    io_quiet();
    struct {
        int rc, type;
        int64_t mnk[3];
    } v;
    memset(&v, 0, sizeof v);
    dd_err local;
    dd_err_clear(&local);
    if (rank == 0) {
        dd_dtype t = DD_F64;
        v.rc = probe_local(path, g, complex_ok, v.mnk, &t, &local);
        v.type = (int)t;
    }
    if (MPI_Bcast(&v, (int)sizeof v, MPI_BYTE, 0, comm) != MPI_SUCCESS)
        return dd_fail(err, DD_EFAIL, "MPI_Bcast failed while sharing the input file's shape");
    int rc = io_bcast_verdict(comm, v.rc, &local, err);
    if (rc != DD_OK)
        return rc;
    *M = v.mnk[0];
    *N = v.mnk[1];
    *K = v.mnk[2];
    *type = (dd_dtype)v.type;
    return DD_OK;
}

int io_probe_gemm(MPI_Comm comm, const char *path, const dd_probe_gemm *g, int64_t *M, int64_t *N,
                  int64_t *K, dd_dtype *type, dd_err *err)
{
    return probe_gemm(comm, path, g, 0, M, N, K, type, err);
}

int io_probe_gemm_cx(MPI_Comm comm, const char *path, const dd_probe_gemm *g, int64_t *M,
                     int64_t *N, int64_t *K, dd_dtype *type, dd_err *err)
{
    return probe_gemm(comm, path, g, 1, M, N, K, type, err);
}

int io_probe_inputs(MPI_Comm comm, const char *path, const char *a, const char *b, int64_t *M,
                    int64_t *N, int64_t *K, dd_dtype *type, dd_err *err)
{
    dd_probe_gemm g = {a ? a : "A", b ? b : "B", "C", 'N', 'N', 0, 0, 0, 0};
    return io_probe_gemm_cx(comm, path, &g, M, N, K, type, err);
}
