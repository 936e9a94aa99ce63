/* io_collective.c — the "collective" HDF5 path: every rank opens the file
 * through the MPI-IO driver and reads or writes its hyperslab in one
 * collective call, so MPI-IO can aggregate the blocks into large requests.
 * Needs parallel HDF5 (DD_HAVE_PHDF5); without it this file is empty.
 *
 * A collective HDF5 call that one rank skips hangs the others, so every
 * request is checked (dataset, type, bounds, dataspaces) and the verdict
 * agreed across ranks *before* the collective call; a rank with an empty
 * block takes part with nothing selected.  Metadata reads and writes are
 * collective too (rank 0 reads, then broadcasts), which keeps thousands of
 * ranks from all reading the same object headers. */
#ifdef DD_HAVE_PHDF5

#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "agree.h"
#include "io.h"
#include "io_h5.h"

typedef struct {
    int writing;
    char *path;
    hid_t file;
    hid_t dxpl;        /* collective transfers */
    io_h5_table dsets; /* open datasets, by name */
    int wrc;           /* writing: the agreed failure of an earlier block write, or DD_OK */
    dd_err werr;       /* its message */
} coll;

/* Local release; H5Fclose is collective, so callers reach here on every rank. */
static int coll_release(dd_io *io, dd_err *err)
{
    coll *h = io->impl;
    if (h == NULL)
        return DD_OK;
    int rc = io_h5_table_free(&h->dsets, h->path, err);
    if (h->dxpl >= 0)
        H5Pclose(h->dxpl);
    if (h->file >= 0 && H5Fclose(h->file) < 0 && rc == DD_OK)
        rc = dd_fail(err, DD_EIO, "cannot close %s; if it was being written, is the disk full?",
                     h->path);
    free(h->path);
    free(h);
    io->impl = NULL;
    return rc;
}

/* Allocates the handle and the access and transfer property lists. */
static int coll_begin(dd_io *io, MPI_Comm comm, const char *path, int writing, hid_t *fapl,
                      dd_err *err)
{
    io_quiet();
    io->ops = &dd_io_collective;
    io->comm = comm;
    io->impl = NULL;
    *fapl = H5I_INVALID_HID;
    if (path == NULL || path[0] == '\0')
        return dd_fail(err, DD_EUSAGE, "no HDF5 file named to %s", writing ? "create" : "read");
    coll *h = calloc(1, sizeof *h);
    if (h == NULL || (h->path = io_h5_strdup(path)) == NULL) {
        free(h);
        return dd_fail(err, DD_ENOMEM, "out of memory opening %s", path);
    }
    h->writing = writing;
    h->file = H5I_INVALID_HID;
    h->dxpl = H5Pcreate(H5P_DATASET_XFER);
    io->impl = h;
    *fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (h->dxpl < 0 || H5Pset_dxpl_mpio(h->dxpl, H5FD_MPIO_COLLECTIVE) < 0 || *fapl < 0 ||
        H5Pset_fapl_mpio(*fapl, comm, MPI_INFO_NULL) < 0 ||
        H5Pset_all_coll_metadata_ops(*fapl, 1) < 0 || H5Pset_coll_metadata_write(*fapl, 1) < 0)
        return dd_fail(err, DD_EIO, "cannot set up the HDF5 MPI-IO driver for %s", path);
    return DD_OK;
}

/* Agreed failure: every rank releases what it holds and returns the same error. */
static int coll_end(dd_io *io, hid_t fapl, int rc, dd_err *err)
{
    if (fapl >= 0)
        H5Pclose(fapl);
    rc = dd_agree(io->comm, rc, err);
    if (rc != DD_OK) {
        dd_err ignored;
        dd_err_clear(&ignored);
        coll_release(io, &ignored);
    }
    return rc;
}

static int coll_open_read(dd_io *io, MPI_Comm comm, const char *path, dd_err *err)
{
    hid_t fapl;
    int rc = coll_begin(io, comm, path, 0, &fapl, err);
    if (rc == DD_OK) {
        coll *h = io->impl;
        h->file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
        if (h->file < 0 && (rc = io_h5_explain_open(path, err)) == DD_OK)
            rc = dd_fail(err, DD_EIO,
                         "cannot open %s for reading with parallel HDF5; check that it exists, "
                         "or try --io independent",
                         path);
    }
    return coll_end(io, fapl, rc, err);
}

static int coll_create(dd_io *io, MPI_Comm comm, const char *path, int ndsets,
                       const char *const *names, const int64_t (*dims)[2], dd_dtype type,
                       dd_err *err)
{
    hid_t fapl;
    uint64_t end = 0;
    int rc = coll_begin(io, comm, path, 1, &fapl, err);
    if (rc == DD_OK && (ndsets < 1 || names == NULL || dims == NULL || !dd_dtype_valid((int)type)))
        rc = dd_fail(err, DD_EUSAGE, "no datasets to create in %s", path);
    for (int i = 0; rc == DD_OK && i < ndsets; i++)
        if (names[i] == NULL || names[i][0] == '\0' || dims[i][0] < 0 || dims[i][1] < 0)
            rc = dd_fail(err, DD_EUSAGE,
                         "dataset %d to create in %s has no name or a negative size", i, path);
    /* Arguments are the same on every rank; agree before the collective create. */
    rc = dd_agree(comm, rc, err);
    if (rc == DD_OK) {
        coll *h = io->impl;
        h->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
        if (h->file < 0)
            rc = dd_fail(err, DD_EIO,
                         "cannot create HDF5 file %s with MPI-IO; check that its directory is "
                         "writable and on a file system every rank sees",
                         path);
        else
            rc = io_h5_create_dsets(h->file, path, ndsets, names, dims, type, &h->dsets, &end, err);
    }
    /* the space, reserved by one rank before anyone writes; agreed before
     * the collective writes, so a full disk cannot leave ranks waiting */
    rc = dd_agree(comm, rc, err);
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (rc == DD_OK && rank == 0)
        rc = io_h5_reserve(path, end, err);
    return coll_end(io, fapl, rc, err);
}

/* Dataset, type, bounds and dataspaces of one block request, checked on
 * every rank and agreed, so that either all ranks enter the collective
 * transfer or none does. */
static int coll_prepare(dd_io *io, int writing, const char *dset, dd_dtype type, int64_t row0,
                        int64_t nrows, int64_t col0, int64_t ncols, const void *buf, io_h5_dset **d,
                        hid_t *fs, hid_t *ms, dd_err *err)
{
    coll *h = io->impl;
    *d = NULL;
    *fs = *ms = H5I_INVALID_HID;
    int rc = DD_OK;
    if (h == NULL)
        rc = dd_fail(err, DD_EUSAGE, "%s an HDF5 file that is not open",
                     writing ? "write to" : "read from");
    else if (h->writing != writing)
        rc = dd_fail(err, DD_EUSAGE, "%s was opened for %s, not %s", h->path,
                     h->writing ? "writing" : "reading", writing ? "writing" : "reading");
    else if (dset == NULL)
        rc = dd_fail(err, DD_EUSAGE, "no dataset named for %s", h->path);
    if (rc == DD_OK && (*d = io_h5_find(&h->dsets, dset)) == NULL) {
        if (writing)
            rc = dd_fail(err, DD_EUSAGE, "dataset \"%s\" was not created in %s", dset, h->path);
        else
            rc = io_h5_open_dset(&h->dsets, h->file, h->path, dset, d, err);
    }
    if (rc == DD_OK)
        rc = io_h5_check_block(h->path, *d, type, row0, nrows, col0, ncols, buf, err);
    if (rc == DD_OK && io_h5_block_spaces((*d)->id, row0, nrows, col0, ncols, fs, ms) < 0)
        rc = dd_fail(err, DD_EIO, "cannot select a block of dataset \"%s\" in %s", dset, h->path);
    rc = dd_agree(io->comm, rc, err);
    if (rc != DD_OK) {
        if (*ms >= 0)
            H5Sclose(*ms);
        if (*fs >= 0)
            H5Sclose(*fs);
        *fs = *ms = H5I_INVALID_HID;
    }
    return rc;
}

/* Whether dataset d is virtual: parallel HDF5 (before 1.14) refuses to read
 * those at all ("parallel reads not supported on virtual datasets"). */
static int coll_is_virtual(hid_t d)
{
    hid_t dcpl = H5Dget_create_plist(d);
    int v = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL;
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return v;
}

/* A block of a virtual dataset, read by this rank alone through serial
 * HDF5 (the file opened read-only for the call): HDF5 then opens the
 * sources with the default driver too.  No collective call, so a rank
 * with an empty block simply has nothing to do. */
static int coll_read_serial(const char *path, const char *dset, hid_t mem, int64_t row0,
                            int64_t nrows, int64_t col0, int64_t ncols, void *buf, dd_err *err)
{
    if (nrows == 0 || ncols == 0)
        return DD_OK;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    int rc = f >= 0 ? DD_OK : io_h5_explain_open(path, err);
    if (f < 0 && rc == DD_OK)
        rc = dd_fail(err, DD_EIO, "cannot open %s with serial HDF5 to read virtual dataset \"%s\"",
                     path, dset);
    hid_t d = f < 0 ? H5I_INVALID_HID : H5Dopen2(f, dset, H5P_DEFAULT), fs = H5I_INVALID_HID,
          ms = H5I_INVALID_HID;
    if (f >= 0 && (d < 0 || io_h5_block_spaces(d, row0, nrows, col0, ncols, &fs, &ms) < 0))
        rc = dd_fail(err, DD_EIO, "cannot select a block of dataset \"%s\" in %s", dset, path);
    else if (f >= 0 && H5Dread(d, mem, ms, fs, H5P_DEFAULT, buf) < 0)
        rc = io_h5_read_failed(path, dset, row0, nrows, col0, ncols, "", err);
    if (ms >= 0)
        H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    if (d >= 0)
        H5Dclose(d);
    if (f >= 0 && H5Fclose(f) < 0 && rc == DD_OK)
        rc = dd_fail(err, DD_EIO, "cannot close %s after reading it", path);
    return rc;
}

static int coll_read_block(dd_io *io, const char *dset, dd_dtype type, int64_t row0, int64_t nrows,
                           int64_t col0, int64_t ncols, void *buf, dd_err *err)
{
    io_h5_dset *d = NULL;
    hid_t fs, ms;
    int rc = coll_prepare(io, 0, dset, type, row0, nrows, col0, ncols, buf, &d, &fs, &ms, err);
    if (rc != DD_OK)
        return rc;
    coll *h = io->impl;
    /* an empty block has no buffer; HDF5 wants a pointer anyway */
    double dummy[2];
    if (coll_is_virtual(d->id)) /* the same dataset, so the same branch, on every rank */
        rc = coll_read_serial(h->path, dset, d->mem, row0, nrows, col0, ncols, buf, err);
    else if (H5Dread(d->id, d->mem, ms, fs, h->dxpl, buf ? buf : dummy) < 0)
        rc = io_h5_read_failed(h->path, dset, row0, nrows, col0, ncols,
                               " collectively (--io independent avoids MPI-IO)", err);
    H5Sclose(ms);
    H5Sclose(fs);
    return rc;
}

static int coll_write_block(dd_io *io, const char *dset, dd_dtype type, int64_t row0, int64_t nrows,
                            int64_t col0, int64_t ncols, const void *buf, dd_err *err)
{
    io_h5_dset *d = NULL;
    hid_t fs, ms;
    int rc = coll_prepare(io, 1, dset, type, row0, nrows, col0, ncols, buf, &d, &fs, &ms, err);
    if (rc != DD_OK)
        return rc;
    coll *h = io->impl;
    double dummy[2] = {0, 0};
    /* After a failed write no rank enters another collective write: a
     * failure inside one (a disk that filled) can leave MPI-IO's ranks out
     * of step, and the next collective call would hang.  Every rank agrees
     * on each write's outcome before the next. */
    if (h->wrc != DD_OK)
        rc = dd_fail(err, h->wrc, "%s", h->werr.msg);
    else if (H5Dwrite(d->id, d->mem, ms, fs, h->dxpl, buf ? buf : dummy) < 0)
        rc = dd_fail(err, DD_EIO,
                     "cannot write rows %lld+%lld, columns %lld+%lld of dataset \"%s\" in %s "
                     "collectively; is the disk full? (--io independent avoids MPI-IO)",
                     (long long)row0, (long long)nrows, (long long)col0, (long long)ncols, dset,
                     h->path);
    H5Sclose(ms);
    H5Sclose(fs);
    rc = dd_agree(io->comm, rc, err);
    if (rc != DD_OK && h->wrc == DD_OK) {
        h->wrc = rc;
        dd_fail(&h->werr, rc, "%s", err->msg);
    }
    return rc;
}

/* ---- attributes: rank 0's values, written by all ranks ------------------------ */

/* Packs rank 0's attributes into one buffer:
 *   per attribute: kind (int32), key (int64 length + bytes), value (8 bytes,
 *   or int64 length + bytes for strings). */
static size_t attrs_pack(const dd_attr *attrs, int nattrs, char *out)
{
    size_t n = 0;
    for (int i = 0; i < nattrs; i++) {
        const char *key = attrs[i].key ? attrs[i].key : "";
        const char *s = attrs[i].s ? attrs[i].s : "";
        int32_t kind = (int32_t)attrs[i].kind;
        int64_t klen = (int64_t)strlen(key), slen = (int64_t)strlen(s);
        if (out)
            memcpy(out + n, &kind, sizeof kind);
        n += sizeof kind;
        if (out) {
            memcpy(out + n, &klen, sizeof klen);
            memcpy(out + n + sizeof klen, key, (size_t)klen);
        }
        n += sizeof klen + (size_t)klen;
        if (attrs[i].kind == DD_ATTR_STR) {
            if (out) {
                memcpy(out + n, &slen, sizeof slen);
                memcpy(out + n + sizeof slen, s, (size_t)slen);
            }
            n += sizeof slen + (size_t)slen;
        } else {
            if (out)
                memcpy(out + n,
                       attrs[i].kind == DD_ATTR_F64 ? (const void *)&attrs[i].d
                                                    : (const void *)&attrs[i].i,
                       8);
            n += 8;
        }
    }
    return n;
}

/* Unpacks into `attrs` (nattrs entries); strings are NUL-terminated copies in `strs`. */
static void attrs_unpack(const char *in, int nattrs, dd_attr *attrs, char *strs)
{
    size_t n = 0, m = 0;
    for (int i = 0; i < nattrs; i++) {
        int32_t kind;
        int64_t len;
        memcpy(&kind, in + n, sizeof kind);
        n += sizeof kind;
        memset(&attrs[i], 0, sizeof attrs[i]);
        attrs[i].kind = (dd_attr_kind)kind;
        memcpy(&len, in + n, sizeof len);
        n += sizeof len;
        memcpy(strs + m, in + n, (size_t)len);
        strs[m + (size_t)len] = '\0';
        attrs[i].key = strs + m;
        n += (size_t)len;
        m += (size_t)len + 1;
        if (kind == DD_ATTR_STR) {
            memcpy(&len, in + n, sizeof len);
            n += sizeof len;
            memcpy(strs + m, in + n, (size_t)len);
            strs[m + (size_t)len] = '\0';
            attrs[i].s = strs + m;
            n += (size_t)len;
            m += (size_t)len + 1;
        } else {
            memcpy(kind == DD_ATTR_F64 ? (void *)&attrs[i].d : (void *)&attrs[i].i, in + n, 8);
            n += 8;
        }
    }
}

static int coll_set_attrs(dd_io *io, const char *dset, const dd_attr *attrs, int nattrs,
                          dd_err *err)
{
    coll *h = io->impl;
    int rank = 0;
    MPI_Comm_rank(io->comm, &rank);
    /* Parallel HDF5 needs identical attribute data on every rank: send rank
     * 0's.  Sizes first, so each rank can allocate. */
    int64_t hdr[2] = {nattrs > 0 ? nattrs : 0, 0};
    if (rank == 0)
        hdr[1] = (int64_t)attrs_pack(attrs, (int)hdr[0], NULL);
    if (MPI_Bcast(hdr, 2, MPI_INT64_T, 0, io->comm) != MPI_SUCCESS)
        return dd_fail(err, DD_EFAIL, "MPI_Bcast failed while sharing attributes");
    int n = (int)hdr[0];
    size_t bytes = (size_t)hdr[1];
    char *buf = malloc(bytes + 1), *strs = malloc(bytes + 1);
    dd_attr *mine = malloc(((size_t)n + 1) * sizeof *mine);
    int rc = DD_OK;
    if (buf == NULL || strs == NULL || mine == NULL || bytes > INT32_MAX)
        rc = dd_fail(err, DD_ENOMEM, "out of memory sharing %d attributes", n);
    else if (h == NULL)
        rc = dd_fail(err, DD_EUSAGE, "attributes set on an HDF5 file that is not open");
    else if (!h->writing)
        rc = dd_fail(err, DD_EUSAGE, "%s was opened for reading, not writing", h->path);
    else if (dset == NULL || io_h5_find(&h->dsets, dset) == NULL)
        rc = dd_fail(err, DD_EUSAGE, "dataset \"%s\" was not created in %s", dset ? dset : "(null)",
                     h->path);
    rc = dd_agree(io->comm, rc, err);
    if (rc == DD_OK) {
        if (rank == 0)
            attrs_pack(attrs, n, buf);
        if (MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, io->comm) != MPI_SUCCESS)
            rc = dd_fail(err, DD_EFAIL, "MPI_Bcast failed while sharing attributes");
    }
    if (rc == DD_OK && n > 0) {
        attrs_unpack(buf, n, mine, strs);
        rc = io_h5_write_attrs(h->file, h->path, dset, mine, n, err);
    }
    free(mine);
    free(strs);
    free(buf);
    return rc;
}

static int coll_close(dd_io *io, dd_err *err)
{
    if (io->impl == NULL)
        return DD_OK; /* on every rank: open and create are agreed */
    MPI_Comm comm = io->comm;
    int rc = coll_release(io, err);
    /* As in the independent path: after close returns, no rank holds the file. */
    if (MPI_Barrier(comm) != MPI_SUCCESS && rc == DD_OK)
        rc = dd_fail(err, DD_EFAIL, "MPI_Barrier failed while closing an HDF5 file");
    return rc;
}

const dd_io_ops dd_io_collective = {
    .name = "collective",
    .open_read = coll_open_read,
    .create = coll_create,
    .read_block = coll_read_block,
    .write_block = coll_write_block,
    .set_attrs = coll_set_attrs,
    .close = coll_close,
};

#else
/* ISO C forbids an empty translation unit. */
typedef int dd_io_collective_unused;
#endif
