/* io_independent.c — the "independent" HDF5 path: no MPI-IO, so it runs
 * with a serial HDF5 (the GPU hosts have only that) as well as a parallel one.
 *
 * Reads: every rank opens the file read-only once and reads its own
 * hyperslab; HDF5 is not asked to coordinate anything.
 * Writes: a serial HDF5 file has one writer at a time, so rank 0 creates the
 * file and its datasets, then the ranks take turns — open, write the block,
 * close, barrier.  The cost is P sequential opens and the writes serialised;
 * fine for the fallback, and the reason "collective" is preferred where it
 * exists. */
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "agree.h"
#include "io.h"
#include "io_h5.h"

typedef struct {
    int writing; /* opened by create(): the file is closed between turns */
    char *path;
    hid_t file; /* reading: open read-only for the handle's lifetime */
    int rank, size;
    io_h5_table dsets; /* reading: open datasets; writing: names, shapes, no handles */
} indep;

static indep *indep_new(dd_io *io, MPI_Comm comm, const char *path, int writing, dd_err *err)
{
    indep *h = calloc(1, sizeof *h);
    if (h == NULL || (h->path = io_h5_strdup(path)) == NULL) {
        free(h);
        dd_fail(err, DD_ENOMEM, "out of memory opening %s", path);
        return NULL;
    }
    h->writing = writing;
    h->file = H5I_INVALID_HID;
    MPI_Comm_rank(comm, &h->rank);
    MPI_Comm_size(comm, &h->size);
    io->ops = &dd_io_independent;
    io->comm = comm;
    io->impl = h;
    return h;
}

static int indep_release(dd_io *io, dd_err *err)
{
    indep *h = io->impl;
    if (h == NULL)
        return DD_OK;
    int rc = io_h5_table_free(&h->dsets, h->path, err);
    if (h->file >= 0 && H5Fclose(h->file) < 0 && rc == DD_OK)
        rc = dd_fail(err, DD_EIO, "cannot close %s", h->path);
    free(h->path);
    free(h);
    io->impl = NULL;
    return rc;
}

static int indep_open_read(dd_io *io, MPI_Comm comm, const char *path, dd_err *err)
{
    io_quiet();
    io->impl = NULL;
    if (path == NULL || path[0] == '\0')
        return dd_fail(err, DD_EUSAGE, "no HDF5 file named to read");
    indep *h = indep_new(io, comm, path, 0, err);
    int rc = h ? DD_OK : DD_ENOMEM;
    if (h && (h->file = io_h5_open_read(path)) < 0 &&
        (rc = io_h5_explain_open(path, err)) == DD_OK)
        rc = dd_fail(err, DD_EIO,
                     "cannot open %s for reading with HDF5; check that it exists and that no "
                     "program is writing it",
                     path);
    /* All ranks hold the file or none does, so close() is collective on all. */
    rc = dd_agree(comm, rc, err);
    if (rc != DD_OK) {
        dd_err ignored;
        dd_err_clear(&ignored);
        indep_release(io, &ignored);
    }
    return rc;
}

static int check_create_args(const char *path, int ndsets, const char *const *names,
                             const int64_t (*dims)[2], dd_dtype type, dd_err *err)
{
    if (path == NULL || path[0] == '\0')
        return dd_fail(err, DD_EUSAGE, "no HDF5 file named to create");
    if (ndsets < 1 || names == NULL || dims == NULL || !dd_dtype_valid((int)type))
        return dd_fail(err, DD_EUSAGE, "no datasets to create in %s", path);
    for (int i = 0; i < ndsets; i++)
        if (names[i] == NULL || names[i][0] == '\0' || dims[i][0] < 0 || dims[i][1] < 0)
            return dd_fail(err, DD_EUSAGE,
                           "dataset %d to create in %s has no name or a negative size", i, path);
    return DD_OK;
}

/* Rank 0 alone creates the file; the others learn its verdict. */
static int indep_create(dd_io *io, MPI_Comm comm, const char *path, int ndsets,
                        const char *const *names, const int64_t (*dims)[2], dd_dtype type,
                        dd_err *err)
{
    io_quiet();
    io->impl = NULL;
    int rc = check_create_args(path, ndsets, names, dims, type, err);
    if (rc != DD_OK)
        return rc; /* same arguments everywhere, so the same verdict */
    dd_err local;
    dd_err_clear(&local);
    indep *h = indep_new(io, comm, path, 1, &local);
    rc = h ? DD_OK : DD_ENOMEM;
    for (int i = 0; h && rc == DD_OK && i < ndsets; i++)
        if (io_h5_add(&h->dsets, names[i], H5I_INVALID_HID, dims[i], type, IO_CX_RI) == NULL)
            rc = dd_fail(&local, DD_ENOMEM, "out of memory creating %s", path);
    if (h && h->rank == 0 && rc == DD_OK) {
        hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        if (f < 0)
            rc = dd_fail(&local, DD_EIO,
                         "cannot create HDF5 file %s; check that its directory is writable", path);
        else {
            uint64_t end = 0;
            rc = io_h5_create_dsets(f, path, ndsets, names, dims, type, NULL, &end, &local);
            if (H5Fclose(f) < 0 && rc == DD_OK)
                rc = dd_fail(&local, DD_EIO, "cannot close %s after creating it; is the disk full?",
                             path);
            if (rc == DD_OK)
                rc = io_h5_reserve(path, end, &local);
        }
    }
    /* Everyone needs rank 0's outcome, and must not open the file before it
     * is complete; all ranks keep a handle or none does.  Agreeing does all three. */
    rc = dd_agree(comm, rc, &local);
    if (rc != DD_OK) {
        dd_fail(err, rc, "%s", local.msg);
        dd_err ignored;
        dd_err_clear(&ignored);
        indep_release(io, &ignored);
    }
    return rc;
}

static int find_dset(indep *h, const char *name, io_h5_dset **d, dd_err *err)
{
    if (name == NULL)
        return dd_fail(err, DD_EUSAGE, "no dataset named for %s", h->path);
    *d = io_h5_find(&h->dsets, name);
    if (*d != NULL)
        return DD_OK;
    if (h->writing)
        return dd_fail(err, DD_EUSAGE, "dataset \"%s\" was not created in %s", name, h->path);
    return io_h5_open_dset(&h->dsets, h->file, h->path, name, d, err);
}

static int indep_read_block(dd_io *io, const char *dset, dd_dtype type, int64_t row0, int64_t nrows,
                            int64_t col0, int64_t ncols, void *buf, dd_err *err)
{
    indep *h = io->impl;
    if (h == NULL)
        return dd_fail(err, DD_EUSAGE, "read from an HDF5 file that is not open");
    if (h->writing)
        return dd_fail(err, DD_EUSAGE, "%s was created for writing, not opened for reading",
                       h->path);
    io_h5_dset *d;
    int rc = find_dset(h, dset, &d, err);
    if (rc == DD_OK)
        rc = io_h5_check_block(h->path, d, type, row0, nrows, col0, ncols, buf, err);
    if (rc != DD_OK || nrows == 0 || ncols == 0)
        return rc;
    hid_t fs, ms;
    if (io_h5_block_spaces(d->id, row0, nrows, col0, ncols, &fs, &ms) < 0)
        return dd_fail(err, DD_EIO, "cannot select a block of dataset \"%s\" in %s", dset, h->path);
    if (H5Dread(d->id, d->mem, ms, fs, H5P_DEFAULT, buf) < 0)
        rc = io_h5_read_failed(h->path, dset, row0, nrows, col0, ncols, "", err);
    H5Sclose(ms);
    H5Sclose(fs);
    return rc;
}

/* One rank's turn: open, write, close — so the next rank sees a complete file. */
static int write_turn(indep *h, const io_h5_dset *d, int64_t row0, int64_t nrows, int64_t col0,
                      int64_t ncols, const void *buf, dd_err *err)
{
    hid_t f = H5Fopen(h->path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        return dd_fail(err, DD_EIO, "cannot open %s for writing on rank %d", h->path, h->rank);
    int rc = DD_OK;
    hid_t ds = H5Dopen2(f, d->name, H5P_DEFAULT), fs = H5I_INVALID_HID, ms = H5I_INVALID_HID;
    if (ds < 0 || io_h5_block_spaces(ds, row0, nrows, col0, ncols, &fs, &ms) < 0)
        rc = dd_fail(err, DD_EIO, "cannot open dataset \"%s\" in %s for writing", d->name, h->path);
    else if (H5Dwrite(ds, d->mem, ms, fs, H5P_DEFAULT, buf) < 0)
        rc = dd_fail(err, DD_EIO,
                     "cannot write rows %lld+%lld, columns %lld+%lld of dataset \"%s\" in %s; "
                     "is the disk full?",
                     (long long)row0, (long long)nrows, (long long)col0, (long long)ncols, d->name,
                     h->path);
    if (ms >= 0)
        H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    if (ds >= 0 && H5Dclose(ds) < 0 && rc == DD_OK)
        rc = dd_fail(err, DD_EIO, "cannot close dataset \"%s\" in %s", d->name, h->path);
    if (H5Fclose(f) < 0 && rc == DD_OK)
        rc = dd_fail(err, DD_EIO, "cannot close %s after writing; is the disk full?", h->path);
    return rc;
}

static int indep_write_block(dd_io *io, const char *dset, dd_dtype type, int64_t row0,
                             int64_t nrows, int64_t col0, int64_t ncols, const void *buf,
                             dd_err *err)
{
    indep *h = io->impl;
    if (h == NULL)
        return dd_fail(err, DD_EUSAGE, "write to an HDF5 file that is not open");
    io_h5_dset *d = NULL;
    int rc = h->writing
                 ? DD_OK
                 : dd_fail(err, DD_EUSAGE, "%s was opened for reading, not writing", h->path);
    if (rc == DD_OK)
        rc = find_dset(h, dset, &d, err);
    if (rc == DD_OK)
        rc = io_h5_check_block(h->path, d, type, row0, nrows, col0, ncols, buf, err);
    /* A rank that failed still walks every barrier, so nobody waits forever. */
    for (int r = 0; r < h->size; r++) {
        if (r == h->rank && rc == DD_OK && nrows > 0 && ncols > 0)
            rc = write_turn(h, d, row0, nrows, col0, ncols, buf, err);
        if (MPI_Barrier(io->comm) != MPI_SUCCESS && rc == DD_OK)
            rc = dd_fail(err, DD_EFAIL, "MPI_Barrier failed while writing %s", h->path);
    }
    return rc;
}

/* Rank 0 alone writes, its own values. */
static int indep_set_attrs(dd_io *io, const char *dset, const dd_attr *attrs, int nattrs,
                           dd_err *err)
{
    indep *h = io->impl;
    if (h == NULL)
        return dd_fail(err, DD_EUSAGE, "attributes set on an HDF5 file that is not open");
    dd_err local;
    dd_err_clear(&local);
    int rc = DD_OK;
    if (!h->writing)
        rc = dd_fail(&local, DD_EUSAGE, "%s was opened for reading, not writing", h->path);
    else if (dset == NULL || io_h5_find(&h->dsets, dset) == NULL)
        rc = dd_fail(&local, DD_EUSAGE, "dataset \"%s\" was not created in %s",
                     dset ? dset : "(null)", h->path);
    if (rc == DD_OK && h->rank == 0 && nattrs > 0) {
        hid_t f = H5Fopen(h->path, H5F_ACC_RDWR, H5P_DEFAULT);
        if (f < 0)
            rc = dd_fail(&local, DD_EIO, "cannot open %s to write its attributes", h->path);
        else {
            rc = io_h5_write_attrs(f, h->path, dset, attrs, nattrs, &local);
            if (H5Fclose(f) < 0 && rc == DD_OK)
                rc =
                    dd_fail(&local, DD_EIO,
                            "cannot close %s after writing attributes; is the disk full?", h->path);
        }
    }
    /* Rank 0's verdict for all, and nobody opens the file before it is done. */
    rc = dd_agree(io->comm, rc, &local);
    if (rc != DD_OK)
        dd_fail(err, rc, "%s", local.msg);
    return rc;
}

static int indep_close(dd_io *io, dd_err *err)
{
    if (io->impl == NULL)
        return DD_OK; /* on every rank: open and create fail on all ranks or none */
    MPI_Comm comm = io->comm;
    int rc = indep_release(io, err);
    /* Once close returns anywhere, no rank holds the file: recreating or
     * renaming it next cannot race a rank still closing its read handle
     * (HDF5's file locks would refuse the create). */
    if (MPI_Barrier(comm) != MPI_SUCCESS && rc == DD_OK)
        rc = dd_fail(err, DD_EFAIL, "MPI_Barrier failed while closing an HDF5 file");
    return rc;
}

const dd_io_ops dd_io_independent = {
    .name = "independent",
    .open_read = indep_open_read,
    .create = indep_create,
    .read_block = indep_read_block,
    .write_block = indep_write_block,
    .set_attrs = indep_set_attrs,
    .close = indep_close,
};
