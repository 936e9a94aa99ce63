/* io_h5.c — HDF5 helpers shared by the I/O paths (io_h5.h): the datasets a
 * file handle holds (the table of open datasets, opening one, creating the
 * output's and reserving their space), block requests and their dataspaces,
 * and opening a file for reading.  The rest of io_h5.h lives beside it:
 * element types and the matrix checks (io_h5_types.c), the files HDF5 opens
 * on its own (io_h5_files.c), HDF5's error stack (io_h5_why.c), attributes
 * (io_h5_attrs.c). */
#define _GNU_SOURCE /* fallocate */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include <hdf5.h>

#include "dd_fault.h"
#include "io.h"
#include "io_h5.h"

/* H5Lexists fails (rather than saying no) when an intermediate group is
 * missing, so walk "g1/g2/name" one component at a time. */
int io_h5_link_exists(hid_t file, const char *name, hid_t lapl)
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
        htri_t e = H5Lexists(file, path, lapl);
        path[i] = c;
        if (e <= 0)
            return 0;
    }
    return 1;
}

char *io_h5_strdup(const char *s)
{
    size_t len = strlen(s) + 1;
    char *copy = malloc(len);
    if (copy != NULL)
        memcpy(copy, s, len);
    return copy;
}

io_h5_dset *io_h5_find(io_h5_table *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->d[i].name, name) == 0)
            return &t->d[i];
    return NULL;
}

io_h5_dset *io_h5_add(io_h5_table *t, const char *name, hid_t id, const int64_t dims[2],
                      dd_dtype type, int names)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 4;
        io_h5_dset *d = realloc(t->d, (size_t)cap * sizeof *d);
        if (d == NULL)
            return NULL;
        t->d = d;
        t->cap = cap;
    }
    char *copy = io_h5_strdup(name);
    hid_t mem = copy == NULL ? H5I_INVALID_HID : io_h5_memtype(type, names);
    if (mem < 0) {
        free(copy);
        return NULL;
    }
    io_h5_dset *e = &t->d[t->n++];
    e->name = copy;
    e->id = id;
    e->dims[0] = dims[0];
    e->dims[1] = dims[1];
    e->type = type;
    e->names = names;
    e->mem = mem;
    return e;
}

int io_h5_table_free(io_h5_table *t, const char *path, dd_err *err)
{
    int rc = DD_OK;
    for (int i = 0; i < t->n; i++) {
        if (t->d[i].id >= 0 && H5Dclose(t->d[i].id) < 0 && rc == DD_OK)
            rc = dd_fail(err, DD_EIO, "cannot close dataset \"%s\" of %s", t->d[i].name, path);
        H5Tclose(t->d[i].mem);
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
    io_h5_guard g;
    hid_t apl = io_h5_guard_apl(&g);
    if (apl < 0)
        return dd_fail(err, DD_EIO, "cannot make an HDF5 access property list for %s", path);
    hid_t d = H5I_INVALID_HID;
    int there = io_h5_link_exists(file, name, apl);
    if (there)
        d = H5Dopen2(file, name, apl);
    H5Pclose(apl);
    if (g.err.msg[0])
        return dd_fail(err, DD_EUSAGE, "%s", g.err.msg);
    if (!there)
        return dd_fail(err, DD_EUSAGE, "file %s has no dataset \"%s\"", path, name);
    if (d < 0)
        return dd_fail(err, DD_EIO, "cannot open \"%s\" in %s as a dataset", name, path);
    int64_t d2[2] = {0, 0};
    dd_dtype dt = DD_F64;
    int names = IO_CX_RI;
    int rc = io_h5_check_matrix(d, path, name, NULL, d2, &dt, &names, err);
    io_h5_dset *e = rc == DD_OK ? io_h5_add(t, name, d, d2, dt, names) : NULL;
    if (rc == DD_OK && e == NULL)
        rc = dd_fail(err, DD_ENOMEM, "out of memory opening dataset \"%s\" in %s", name, path);
    if (rc != DD_OK) {
        H5Dclose(d);
        return rc;
    }
    *out = e;
    return DD_OK;
}

int io_h5_reserve(const char *path, uint64_t bytes, dd_err *err)
{
    if (bytes == 0)
        return DD_OK;
    int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return dd_fail(err, DD_EIO, "cannot open %s to reserve its space: %s", path,
                       strerror(errno));
    int rc = DD_OK;
    /* the data, and a margin for what HDF5 writes at close (object headers,
     * attributes, the superblock's end of file), allocated without changing
     * the file's size: a full disk at close would leave collective ranks
     * out of step inside HDF5 */
    uint64_t margin = (uint64_t)1 << 20;
    /* DD_FAULT=no-fallocate: tests take the path of a file system without it */
    int fa = dd_fault("no-fallocate")
                 ? (errno = EOPNOTSUPP, -1)
                 : fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)(bytes + margin));
    int e = fa == 0 ? 0 : errno;
    struct statvfs vs;
    struct stat st;
    double avail = fstatvfs(fd, &vs) == 0 ? (double)vs.f_bavail * (double)vs.f_frsize : -1;
    /* Without fallocate (NFSv3, some parallel file systems) the free space
     * is compared instead: a disk that cannot hold the file is found now,
     * not by writes that fail on some ranks inside a collective MPI-IO call
     * (which then hangs) or that MPI-IO lets fail without a word. */
    if ((e == EOPNOTSUPP || e == ENOSYS) && avail >= 0 && fstat(fd, &st) == 0) {
        double held = (double)st.st_blocks * 512.0; /* what HDF5 wrote so far */
        if (avail + held < (double)(bytes + margin))
            e = ENOSPC;
    }
    if (e != 0 && e != EOPNOTSUPP && e != ENOSYS) {
        if (e == ENOSPC || e == EDQUOT)
            rc = dd_fail(err, DD_EIO,
                         "not enough space for %s: it needs %.3g GiB and the file system has "
                         "%.3g GiB free%s; free space or choose another place for the output",
                         path, (double)(bytes + margin) / 1073741824.0, avail / 1073741824.0,
                         e == EDQUOT ? " (or the disk quota is reached)" : "");
        else
            rc = dd_fail(err, DD_EIO, "cannot reserve %.3g GiB for %s: %s",
                         (double)bytes / 1073741824.0, path, strerror(e));
    }
    if (close(fd) != 0 && rc == DD_OK)
        rc = dd_fail(err, DD_EIO, "cannot close %s after reserving its space: %s", path,
                     strerror(errno));
    return rc;
}

/* Where a new contiguous dataset's data ends in the file (0 if unknown). */
static uint64_t data_end(hid_t d)
{
    haddr_t off = H5Dget_offset(d);
    hsize_t size = H5Dget_storage_size(d);
    return off == HADDR_UNDEF ? 0 : (uint64_t)off + (uint64_t)size;
}

int io_h5_create_dsets(hid_t file, const char *path, int ndsets, const char *const *names,
                       const int64_t (*dims)[2], dd_dtype type, io_h5_table *t, uint64_t *end,
                       dd_err *err)
{
    *end = 0;
    int rc = DD_OK;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), lcpl = H5Pcreate(H5P_LINK_CREATE);
    hid_t ftype = io_h5_filetype(type);
    /* Contiguous and allocated at creation: parallel HDF5 needs early
     * allocation anyway; never filling avoids writing the matrix twice. */
    if (dcpl < 0 || lcpl < 0 || ftype < 0 || H5Pset_layout(dcpl, H5D_CONTIGUOUS) < 0 ||
        H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) < 0 ||
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 ||
        H5Pset_create_intermediate_group(lcpl, 1) < 0)
        rc = dd_fail(err, DD_EIO, "cannot set up HDF5 dataset creation properties for %s", path);
    for (int i = 0; rc == DD_OK && i < ndsets; i++) {
        hsize_t hd[2] = {(hsize_t)dims[i][0], (hsize_t)dims[i][1]};
        hid_t space = H5Screate_simple(2, hd, NULL);
        hid_t d = space < 0 ? H5I_INVALID_HID
                            : H5Dcreate2(file, names[i], ftype, space, lcpl, dcpl, H5P_DEFAULT);
        if (space >= 0)
            H5Sclose(space);
        if (d < 0) {
            rc = dd_fail(
                err, DD_EIO, "cannot create dataset \"%s\" (%lld×%lld %s) in %s; is the disk full?",
                names[i], (long long)dims[i][0], (long long)dims[i][1], dd_dtype_name(type), path);
            break;
        }
        if (data_end(d) > *end)
            *end = data_end(d);
        if (t != NULL && io_h5_add(t, names[i], d, dims[i], type, IO_CX_RI) != NULL)
            continue;
        H5Dclose(d);
        if (t != NULL)
            rc = dd_fail(err, DD_ENOMEM, "out of memory creating dataset \"%s\" in %s", names[i],
                         path);
    }
    if (ftype >= 0)
        H5Tclose(ftype);
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

hid_t io_h5_open_read(const char *path)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0)
        return H5I_INVALID_HID;
    hid_t f = H5Pset_sieve_buf_size(fapl, 0) < 0 ? H5I_INVALID_HID
                                                : H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    return f;
}
