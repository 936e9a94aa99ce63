/* io_probe.c — the input probe (io.h): rank 0 opens the input read-only,
 * checks that A and B are matrices that fit together, and broadcasts its
 * verdict and the sizes, so every rank returns the same rc and message. */
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

typedef struct {
    int64_t rows, cols;
    dd_dtype type;
} probe_mat;

/* Checks one matrix dataset; `label` is "A" or "B", `name` its name in the file. */
static int probe_matrix(hid_t file, const char *path, const char *label, const char *name,
                        probe_mat *m, dd_err *err)
{
    if (!io_h5_link_exists(file, name))
        return dd_fail(err, DD_EUSAGE,
                       "input file %s has no dataset \"%s\" for matrix %s; name the right one "
                       "with --%s",
                       path, name, label, label[0] == 'A' ? "a" : "b");
    hid_t obj = H5Oopen(file, name, H5P_DEFAULT);
    if (obj < 0)
        return dd_fail(err, DD_EIO, "cannot open \"%s\" in input file %s; is the file damaged?",
                       name, path);
    int rc = DD_OK;
    int64_t dims[2] = {0, 0};
    if (H5Iget_type(obj) != H5I_DATASET)
        rc = dd_fail(err, DD_EUSAGE,
                     "\"%s\" in input file %s is not a dataset (a group?); matrix %s must be a "
                     "2-D dataset",
                     name, path, label);
    else
        rc = io_h5_check_matrix(obj, path, name, label, dims, &m->type, err);
    if (rc == DD_OK && (dims[0] == 0 || dims[1] == 0))
        rc = dd_fail(err, DD_EUSAGE,
                     "dataset %s (\"%s\" in %s) is %lld×%lld; dgemm-dist needs a non-empty matrix",
                     label, name, path, (long long)dims[0], (long long)dims[1]);
    m->rows = dims[0];
    m->cols = dims[1];
    H5Oclose(obj);
    return rc;
}

static int probe_local(const char *path, const char *a, const char *b, probe_mat *ma, probe_mat *mb,
                       dd_err *err)
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
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0)
        return dd_fail(err, DD_EIO,
                       "cannot open input file %s with HDF5; if another program is writing it, "
                       "wait for it to finish (on file systems without locks set "
                       "HDF5_USE_FILE_LOCKING=FALSE)",
                       path);
    int rc = probe_matrix(file, path, "A", a, ma, err);
    if (rc == DD_OK)
        rc = probe_matrix(file, path, "B", b, mb, err);
    if (rc == DD_OK && ma->type != mb->type)
        rc = dd_fail(err, DD_EUSAGE,
                     "A is %s but B is %s in %s; store both with the same element type",
                     dd_dtype_name(ma->type), dd_dtype_name(mb->type), path);
    if (rc == DD_OK && ma->cols != mb->rows)
        rc = dd_fail(
            err, DD_EUSAGE, "A is %lld×%lld but B is %lld×%lld: A's columns must equal B's rows",
            (long long)ma->rows, (long long)ma->cols, (long long)mb->rows, (long long)mb->cols);
    if (H5Fclose(file) < 0 && rc == DD_OK)
        rc = dd_fail(err, DD_EIO, "cannot close input file %s after checking it", path);
    return rc;
}

int io_probe_inputs(MPI_Comm comm, const char *path, const char *a, const char *b, int64_t *M,
                    int64_t *N, int64_t *K, dd_dtype *type, dd_err *err)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    io_quiet();
    struct {
        int rc, type;
        int64_t M, N, K;
    } v;
    memset(&v, 0, sizeof v);
    dd_err local;
    dd_err_clear(&local);
    if (rank == 0) {
        probe_mat ma, mb;
        v.rc = probe_local(path, a ? a : "A", b ? b : "B", &ma, &mb, &local);
        if (v.rc == DD_OK) {
            v.M = ma.rows;
            v.K = ma.cols;
            v.N = mb.cols;
            v.type = (int)ma.type;
        }
    }
    if (MPI_Bcast(&v, (int)sizeof v, MPI_BYTE, 0, comm) != MPI_SUCCESS)
        return dd_fail(err, DD_EFAIL, "MPI_Bcast failed while sharing the input file's shape");
    int rc = io_bcast_verdict(comm, v.rc, &local, err);
    if (rc != DD_OK)
        return rc;
    *M = v.M;
    *N = v.N;
    *K = v.K;
    *type = (dd_dtype)v.type;
    return DD_OK;
}
