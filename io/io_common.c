/* io_common.c — what both HDF5 paths share: a quiet HDF5, the input probe,
 * the output-file discipline (temporary name, commit by rename, abort) and
 * the choice of path by name.
 *
 * Rank 0 does the file-system work and broadcasts its verdict, so every rank
 * returns the same rc and message and no rank touches the file system
 * concurrently with another for these checks. */
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

void io_quiet(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

const dd_io_ops *io_select(const char *name)
{
    if (name == NULL || strcmp(name, "auto") == 0) {
#ifdef DD_HAVE_PHDF5
        return &dd_io_collective;
#else
        return &dd_io_independent;
#endif
    }
    if (strcmp(name, "independent") == 0)
        return &dd_io_independent;
#ifdef DD_HAVE_PHDF5
    if (strcmp(name, "collective") == 0)
        return &dd_io_collective;
#endif
    return NULL;
}

/* ---- agreement on rank 0's verdict ----------------------------------------- */

/* Every rank returns rank 0's rc and, on failure, rank 0's message. */
static int bcast_verdict(MPI_Comm comm, int rc, const dd_err *local, dd_err *err)
{
    struct {
        int rc;
        dd_err e;
    } v;
    memset(&v, 0, sizeof v);
    v.rc = rc;
    v.e = *local;
    if (MPI_Bcast(&v, (int)sizeof v, MPI_BYTE, 0, comm) != MPI_SUCCESS)
        return dd_fail(err, DD_EFAIL, "MPI_Bcast failed while sharing rank 0's file checks");
    if (v.rc == DD_OK)
        return DD_OK;
    v.e.msg[DD_ERRLEN - 1] = '\0';
    return dd_fail(err, v.rc, "%s", v.e.msg[0] ? v.e.msg : "rank 0's file check failed");
}

/* ---- input probe --------------------------------------------------------------- */

typedef struct {
    int64_t rows, cols;
    dd_dtype type;
} probe_mat;

/* A short human name for an HDF5 type: "int32", "uint8", "2-byte float", "string". */
static void type_name(hid_t t, char *out, size_t len)
{
    H5T_class_t cls = H5Tget_class(t);
    size_t size = H5Tget_size(t);
    switch (cls) {
    case H5T_INTEGER:
        snprintf(out, len, "%s%zu", H5Tget_sign(t) == H5T_SGN_NONE ? "uint" : "int", size * 8);
        break;
    case H5T_FLOAT:
        snprintf(out, len, "%zu-byte float", size);
        break;
    case H5T_STRING:
        snprintf(out, len, "string");
        break;
    case H5T_COMPOUND:
        snprintf(out, len, "compound");
        break;
    case H5T_ENUM:
        snprintf(out, len, "enum");
        break;
    case H5T_ARRAY:
        snprintf(out, len, "array");
        break;
    case H5T_VLEN:
        snprintf(out, len, "variable-length");
        break;
    case H5T_BITFIELD:
        snprintf(out, len, "bitfield");
        break;
    case H5T_OPAQUE:
        snprintf(out, len, "opaque");
        break;
    case H5T_REFERENCE:
        snprintf(out, len, "reference");
        break;
    case H5T_TIME:
        snprintf(out, len, "time");
        break;
    default:
        snprintf(out, len, "unknown");
        break;
    }
}

/* H5Lexists fails (rather than saying no) when an intermediate group is
 * missing, so walk "g1/g2/name" one component at a time. */
static int link_exists(hid_t file, const char *name)
{
    char path[1024];
    size_t n = strlen(name);
    if (n == 0 || n >= sizeof path)
        return 0;
    memcpy(path, name, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char c = path[i];
        path[i] = '\0';
        htri_t e = H5Lexists(file, path, H5P_DEFAULT);
        path[i] = c;
        if (e <= 0)
            return 0;
    }
    return 1;
}

/* Checks one matrix dataset; `label` is "A" or "B", `name` its name in the file. */
static int probe_matrix(hid_t file, const char *path, const char *label, const char *name,
                        probe_mat *m, dd_err *err)
{
    if (!link_exists(file, name))
        return dd_fail(err, DD_EUSAGE,
                       "input file %s has no dataset \"%s\" for matrix %s; name the right one "
                       "with --%s",
                       path, name, label, label[0] == 'A' ? "a" : "b");
    hid_t obj = H5Oopen(file, name, H5P_DEFAULT);
    if (obj < 0)
        return dd_fail(err, DD_EIO, "cannot open \"%s\" in input file %s; is the file damaged?",
                       name, path);
    if (H5Iget_type(obj) != H5I_DATASET) {
        H5Oclose(obj);
        return dd_fail(err, DD_EUSAGE,
                       "\"%s\" in input file %s is not a dataset (a group?); matrix %s must be a "
                       "2-D dataset",
                       name, path, label);
    }
    int rc = DD_OK;
    hid_t space = H5Dget_space(obj), type = H5Dget_type(obj);
    if (space < 0 || type < 0) {
        rc = dd_fail(err, DD_EIO, "cannot read the shape or type of dataset \"%s\" in %s", name,
                     path);
        goto out;
    }
    int nd = H5Sget_simple_extent_ndims(space);
    hsize_t dims[H5S_MAX_RANK];
    if (nd < 0 || H5Sget_simple_extent_dims(space, dims, NULL) < 0) {
        rc = dd_fail(err, DD_EIO, "cannot read the shape of dataset \"%s\" in %s", name, path);
        goto out;
    }
    if (nd != 2) {
        rc = dd_fail(err, DD_EUSAGE,
                     "dataset %s (\"%s\" in %s) is %d-D; dgemm-dist needs a 2-D matrix", label,
                     name, path, nd);
        goto out;
    }
    H5T_class_t cls = H5Tget_class(type);
    size_t size = H5Tget_size(type);
    if (cls != H5T_FLOAT || (size != 8 && size != 4)) {
        char tn[64];
        type_name(type, tn, sizeof tn);
        rc = dd_fail(err, DD_EUSAGE,
                     "dataset %s (\"%s\" in %s) has type %s; dgemm-dist needs 8- or 4-byte floats",
                     label, name, path, tn);
        goto out;
    }
    if (dims[0] == 0 || dims[1] == 0 || dims[0] > INT64_MAX || dims[1] > INT64_MAX) {
        rc = dd_fail(err, DD_EUSAGE,
                     "dataset %s (\"%s\" in %s) is %llu×%llu; dgemm-dist needs a non-empty matrix",
                     label, name, path, (unsigned long long)dims[0], (unsigned long long)dims[1]);
        goto out;
    }
    m->rows = (int64_t)dims[0];
    m->cols = (int64_t)dims[1];
    m->type = size == 8 ? DD_F64 : DD_F32;
out:
    if (type >= 0)
        H5Tclose(type);
    if (space >= 0)
        H5Sclose(space);
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
            return dd_fail(err, DD_EIO, "cannot open input file %s: no such file", path);
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
    int rc = bcast_verdict(comm, v.rc, &local, err);
    if (rc != DD_OK)
        return rc;
    *M = v.M;
    *N = v.N;
    *K = v.K;
    *type = (dd_dtype)v.type;
    return DD_OK;
}

/* ---- output discipline --------------------------------------------------------- */

/* Splits `path` into its directory ("." when there is none) and base name. */
static int split_path(const char *path, char *dir, size_t dlen, const char **base)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        snprintf(dir, dlen, ".");
        *base = path;
        return 0;
    }
    size_t n = (size_t)(slash - path);
    if (n == 0)
        n = 1; /* "/c.h5": the directory is "/" */
    if (n >= dlen)
        return -1;
    memcpy(dir, path, n);
    dir[n] = '\0';
    *base = slash + 1;
    return 0;
}

static int same_file(const char *p, const char *q)
{
    struct stat s1, s2;
    if (stat(p, &s1) != 0 || stat(q, &s2) != 0)
        return 0;
    return s1.st_dev == s2.st_dev && s1.st_ino == s2.st_ino;
}

static int prepare_local(const char *path, const char *input_path, int force, char *tmp,
                         size_t tmplen, dd_err *err)
{
    if (path == NULL || path[0] == '\0')
        return dd_fail(err, DD_EUSAGE, "no output file given; pass --out FILE");
    char dir[4096];
    const char *base;
    if (split_path(path, dir, sizeof dir, &base) != 0)
        return dd_fail(err, DD_EUSAGE, "output path %s is too long", path);
    if (base[0] == '\0')
        return dd_fail(err, DD_EUSAGE, "output %s names a directory; give a file name", path);
    struct stat st;
    if (stat(dir, &st) != 0)
        return dd_fail(err, DD_EUSAGE, "output directory %s does not exist; create it first", dir);
    if (!S_ISDIR(st.st_mode))
        return dd_fail(err, DD_EUSAGE, "output directory %s is not a directory", dir);
    if (access(dir, W_OK | X_OK) != 0)
        return dd_fail(err, DD_EUSAGE,
                       "output directory %s is not writable; choose another place for --out", dir);
    if (stat(path, &st) == 0) {
        if (input_path && same_file(path, input_path))
            return dd_fail(err, DD_EUSAGE,
                           "output %s is the input file; dgemm-dist never overwrites its input, "
                           "choose another --out",
                           path);
        if (S_ISDIR(st.st_mode))
            return dd_fail(err, DD_EUSAGE, "output %s is a directory; give a file name", path);
        if (!force)
            return dd_fail(err, DD_EUSAGE, "output %s exists; pass --force to replace it", path);
    } else if (errno != ENOENT) {
        return dd_fail(err, DD_EIO, "cannot check output %s: %s", path, strerror(errno));
    }
    /* Beside the final name, so that rename() is atomic; hidden, so a crashed
     * run leaves no file that looks like a result. */
    int n;
    if (strchr(path, '/') == NULL)
        n = snprintf(tmp, tmplen, ".%s.tmp.%ld", base, (long)getpid());
    else
        n = snprintf(tmp, tmplen, "%s/.%s.tmp.%ld", strcmp(dir, "/") == 0 ? "" : dir, base,
                     (long)getpid());
    if (n < 0 || (size_t)n >= tmplen)
        return dd_fail(err, DD_EUSAGE, "output path %s is too long for a temporary name", path);
    return DD_OK;
}

int io_output_prepare(MPI_Comm comm, const char *path, const char *input_path, int force, char *tmp,
                      size_t tmplen, dd_err *err)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    dd_err local;
    dd_err_clear(&local);
    char name[4096 + 64];
    name[0] = '\0';
    int rc = DD_OK;
    if (rank == 0)
        rc = prepare_local(path, input_path, force, name, sizeof name, &local);
    rc = bcast_verdict(comm, rc, &local, err);
    if (rc != DD_OK) {
        if (tmp && tmplen)
            tmp[0] = '\0';
        return rc;
    }
    if (MPI_Bcast(name, (int)sizeof name, MPI_CHAR, 0, comm) != MPI_SUCCESS)
        return dd_fail(err, DD_EFAIL, "MPI_Bcast failed while sharing the temporary output name");
    if (tmp == NULL || strlen(name) >= tmplen)
        return dd_fail(err, DD_EUSAGE, "output path %s is too long for a temporary name", path);
    memcpy(tmp, name, strlen(name) + 1);
    return DD_OK;
}

int io_output_commit(MPI_Comm comm, const char *tmp, const char *path, dd_err *err)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    dd_err local;
    dd_err_clear(&local);
    int rc = DD_OK;
    if (rank == 0 && rename(tmp, path) != 0)
        rc = dd_fail(&local, DD_EIO, "cannot rename %s to %s: %s; the result is left in %s", tmp,
                     path, strerror(errno), tmp);
    return bcast_verdict(comm, rc, &local, err);
}

/* No communication: it runs on error paths, where a collective could hang. */
void io_output_abort(MPI_Comm comm, const char *tmp)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0 && tmp && tmp[0])
        unlink(tmp);
}

/* ---- HDF5 helpers shared by both paths (io_h5.h) ------------------------------- */

hid_t io_h5_memtype(dd_dtype t)
{
    return t == DD_F64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
}
hid_t io_h5_filetype(dd_dtype t)
{
    return t == DD_F64 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE;
}

io_h5_dset *io_h5_find(io_h5_table *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->d[i].name, name) == 0)
            return &t->d[i];
    return NULL;
}

io_h5_dset *io_h5_add(io_h5_table *t, const char *name, hid_t id, const int64_t dims[2],
                      dd_dtype type)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 4;
        io_h5_dset *d = realloc(t->d, (size_t)cap * sizeof *d);
        if (d == NULL)
            return NULL;
        t->d = d;
        t->cap = cap;
    }
    size_t len = strlen(name) + 1;
    char *copy = malloc(len);
    if (copy == NULL)
        return NULL;
    memcpy(copy, name, len);
    io_h5_dset *e = &t->d[t->n++];
    e->name = copy;
    e->id = id;
    e->dims[0] = dims[0];
    e->dims[1] = dims[1];
    e->type = type;
    return e;
}

int io_h5_table_free(io_h5_table *t, const char *path, dd_err *err)
{
    int rc = DD_OK;
    for (int i = 0; i < t->n; i++) {
        if (t->d[i].id >= 0 && H5Dclose(t->d[i].id) < 0 && rc == DD_OK)
            rc = dd_fail(err, DD_EIO, "cannot close dataset \"%s\" of %s", t->d[i].name, path);
        free(t->d[i].name);
    }
    free(t->d);
    t->d = NULL;
    t->n = t->cap = 0;
    return rc;
}

int io_h5_open_dset(io_h5_table *t, hid_t file, const char *path, const char *name,
                    io_h5_dset **out, dd_err *err)
{
    if (!link_exists(file, name))
        return dd_fail(err, DD_EUSAGE, "file %s has no dataset \"%s\"", path, name);
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
    if (d < 0)
        return dd_fail(err, DD_EIO, "cannot open \"%s\" in %s as a dataset", name, path);
    int rc = DD_OK;
    hid_t space = H5Dget_space(d), type = H5Dget_type(d);
    hsize_t dims[H5S_MAX_RANK];
    int nd = space < 0 ? -1 : H5Sget_simple_extent_ndims(space);
    if (type < 0 || nd < 0 || H5Sget_simple_extent_dims(space, dims, NULL) < 0) {
        rc = dd_fail(err, DD_EIO, "cannot read the shape and type of dataset \"%s\" in %s", name,
                     path);
    } else if (nd != 2) {
        rc = dd_fail(err, DD_EUSAGE, "dataset \"%s\" in %s is %d-D; it must be a 2-D matrix", name,
                     path, nd);
    } else if (H5Tget_class(type) != H5T_FLOAT ||
               (H5Tget_size(type) != 8 && H5Tget_size(type) != 4)) {
        char tn[64];
        type_name(type, tn, sizeof tn);
        rc = dd_fail(err, DD_EUSAGE,
                     "dataset \"%s\" in %s has type %s; dgemm-dist needs 8- or 4-byte floats", name,
                     path, tn);
    }
    int64_t d2[2] = {0, 0};
    dd_dtype dt = DD_F64;
    if (rc == DD_OK) {
        d2[0] = (int64_t)dims[0];
        d2[1] = (int64_t)dims[1];
        dt = H5Tget_size(type) == 8 ? DD_F64 : DD_F32;
    }
    if (type >= 0)
        H5Tclose(type);
    if (space >= 0)
        H5Sclose(space);
    io_h5_dset *e = rc == DD_OK ? io_h5_add(t, name, d, d2, dt) : NULL;
    if (rc == DD_OK && e == NULL)
        rc = dd_fail(err, DD_ENOMEM, "out of memory opening dataset \"%s\" in %s", name, path);
    if (rc != DD_OK) {
        H5Dclose(d);
        return rc;
    }
    *out = e;
    return DD_OK;
}

int io_h5_create_dsets(hid_t file, const char *path, int ndsets, const char *const *names,
                       const int64_t (*dims)[2], dd_dtype type, io_h5_table *t, dd_err *err)
{
    int rc = DD_OK;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), lcpl = H5Pcreate(H5P_LINK_CREATE);
    /* Contiguous and allocated at creation: parallel HDF5 needs early
     * allocation anyway; never filling avoids writing the matrix twice. */
    if (dcpl < 0 || lcpl < 0 || H5Pset_layout(dcpl, H5D_CONTIGUOUS) < 0 ||
        H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) < 0 ||
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 ||
        H5Pset_create_intermediate_group(lcpl, 1) < 0)
        rc = dd_fail(err, DD_EIO, "cannot set up HDF5 dataset creation properties for %s", path);
    for (int i = 0; rc == DD_OK && i < ndsets; i++) {
        hsize_t hd[2] = {(hsize_t)dims[i][0], (hsize_t)dims[i][1]};
        hid_t space = H5Screate_simple(2, hd, NULL);
        hid_t d = space < 0 ? H5I_INVALID_HID
                            : H5Dcreate2(file, names[i], io_h5_filetype(type), space, lcpl, dcpl,
                                         H5P_DEFAULT);
        if (space >= 0)
            H5Sclose(space);
        if (d < 0) {
            rc = dd_fail(
                err, DD_EIO, "cannot create dataset \"%s\" (%lld×%lld %s) in %s; is the disk full?",
                names[i], (long long)dims[i][0], (long long)dims[i][1], dd_dtype_name(type), path);
            break;
        }
        if (t != NULL && io_h5_add(t, names[i], d, dims[i], type) != NULL)
            continue;
        H5Dclose(d);
        if (t != NULL)
            rc = dd_fail(err, DD_ENOMEM, "out of memory creating dataset \"%s\" in %s", names[i],
                         path);
    }
    if (lcpl >= 0)
        H5Pclose(lcpl);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return rc;
}

int io_h5_check_block(const char *path, const io_h5_dset *d, dd_dtype type, int64_t row0,
                      int64_t nrows, int64_t col0, int64_t ncols, const void *buf, dd_err *err)
{
    if (type != d->type)
        return dd_fail(err, DD_EUSAGE, "dataset \"%s\" in %s holds %s values, not %s", d->name,
                       path, dd_dtype_name(d->type), dd_dtype_name(type));
    if (row0 < 0 || nrows < 0 || col0 < 0 || ncols < 0 || row0 > d->dims[0] - nrows ||
        col0 > d->dims[1] - ncols)
        return dd_fail(err, DD_EUSAGE,
                       "block of rows %lld+%lld, columns %lld+%lld lies outside dataset \"%s\" "
                       "(%lld×%lld) in %s",
                       (long long)row0, (long long)nrows, (long long)col0, (long long)ncols,
                       d->name, (long long)d->dims[0], (long long)d->dims[1], path);
    if (buf == NULL && nrows > 0 && ncols > 0)
        return dd_fail(err, DD_EUSAGE, "no buffer given for a block of dataset \"%s\" in %s",
                       d->name, path);
    return DD_OK;
}

int io_h5_block_spaces(hid_t dset, int64_t row0, int64_t nrows, int64_t col0, int64_t ncols,
                       hid_t *fspace, hid_t *mspace)
{
    *fspace = H5Dget_space(dset);
    *mspace = H5I_INVALID_HID;
    if (*fspace < 0)
        return -1;
    herr_t ok;
    if (nrows == 0 || ncols == 0) {
        /* An empty block still takes part in collective I/O: none selected. */
        hsize_t one = 1;
        *mspace = H5Screate_simple(1, &one, NULL);
        ok = *mspace < 0 ? -1 : H5Sselect_none(*fspace);
        if (ok >= 0)
            ok = H5Sselect_none(*mspace);
    } else {
        hsize_t start[2] = {(hsize_t)row0, (hsize_t)col0};
        hsize_t count[2] = {(hsize_t)nrows, (hsize_t)ncols};
        ok = H5Sselect_hyperslab(*fspace, H5S_SELECT_SET, start, NULL, count, NULL);
        if (ok >= 0)
            *mspace = H5Screate_simple(2, count, NULL);
        if (*mspace < 0)
            ok = -1;
    }
    if (ok < 0) {
        if (*mspace >= 0)
            H5Sclose(*mspace);
        H5Sclose(*fspace);
        *fspace = *mspace = H5I_INVALID_HID;
        return -1;
    }
    return 0;
}

static herr_t write_attr(hid_t obj, hid_t scalar, const dd_attr *a)
{
    hid_t ftype, mtype;
    const void *val;
    const char *s = a->s ? a->s : "";
    switch (a->kind) {
    case DD_ATTR_STR:
        /* Variable-length UTF-8: h5py reads it back as str, not bytes. */
        ftype = H5Tcopy(H5T_C_S1);
        if (ftype < 0)
            return -1;
        if (H5Tset_size(ftype, H5T_VARIABLE) < 0 || H5Tset_cset(ftype, H5T_CSET_UTF8) < 0) {
            H5Tclose(ftype);
            return -1;
        }
        mtype = ftype;
        val = &s;
        break;
    case DD_ATTR_F64:
        ftype = H5T_IEEE_F64LE;
        mtype = H5T_NATIVE_DOUBLE;
        val = &a->d;
        break;
    case DD_ATTR_I64:
        ftype = H5T_STD_I64LE;
        mtype = H5T_NATIVE_INT64;
        val = &a->i;
        break;
    default:
        return -1;
    }
    herr_t ok = 0;
    htri_t exists = H5Aexists(obj, a->key);
    if (exists < 0 || (exists > 0 && H5Adelete(obj, a->key) < 0))
        ok = -1;
    hid_t attr =
        ok < 0 ? H5I_INVALID_HID : H5Acreate2(obj, a->key, ftype, scalar, H5P_DEFAULT, H5P_DEFAULT);
    if (attr < 0 || H5Awrite(attr, mtype, val) < 0)
        ok = -1;
    if (attr >= 0 && H5Aclose(attr) < 0)
        ok = -1;
    if (a->kind == DD_ATTR_STR)
        H5Tclose(ftype);
    return ok;
}

int io_h5_write_attrs(hid_t file, const char *path, const char *obj, const dd_attr *attrs,
                      int nattrs, dd_err *err)
{
    hid_t o = H5Oopen(file, obj, H5P_DEFAULT);
    if (o < 0)
        return dd_fail(err, DD_EIO, "cannot open \"%s\" in %s to set its attributes", obj, path);
    hid_t scalar = H5Screate(H5S_SCALAR);
    int rc =
        scalar < 0 ? dd_fail(err, DD_EIO, "cannot make an HDF5 dataspace for attributes") : DD_OK;
    for (int i = 0; rc == DD_OK && i < nattrs; i++)
        if (attrs[i].key == NULL || write_attr(o, scalar, &attrs[i]) < 0)
            rc = dd_fail(err, DD_EIO, "cannot write attribute \"%s\" on \"%s\" in %s",
                         attrs[i].key ? attrs[i].key : "(null)", obj, path);
    if (scalar >= 0)
        H5Sclose(scalar);
    if (H5Oclose(o) < 0 && rc == DD_OK)
        rc = dd_fail(err, DD_EIO, "cannot close \"%s\" in %s after setting attributes", obj, path);
    return rc;
}
