/* io_direct.c — the "direct" path: blocks read and written at the speed of
 * the machine, every rank at once, with a serial HDF5.
 *
 * HDF5 keeps the structure: the file, its datasets and the attributes are
 * made by rank 0 through the independent path; readers open the file
 * read-only to look datasets up.  The bytes move with pread/pwrite at the
 * dataset's offset (H5Dget_offset) wherever bytes on disk are bytes in
 * memory: contiguous, unfiltered, allocated, not external, the IEEE
 * little-endian float of its size on a little-endian host, in a sec2 file;
 * anything else (chunked, compressed, big-endian, virtual, kept in external
 * raw files) is read as an HDF5 hyperslab.  An offset is a position in the
 * file that holds the dataset, which need not be `path`: an external link
 * (also behind a soft link) leads to another file, and so does a mounted
 * one.  So the bytes are read through the descriptor of the dataset's own
 * file as HDF5 has it open (its sec2 driver's), or through ours where that
 * is the same file (same device and inode); a dataset whose file has no
 * such descriptor is read through HDF5.  Row i of a block is ncols·es
 * bytes at offset + ((row0 + i)·gcols + col0)·es.  Reads use up to
 * min(16, cores per rank) threads, writes up to min(4, cores per rank)
 * (buffered writes to one file contend for its inode: past 4 they lose;
 * docs/results/cpu-2026-12-02-write), or DD_IO_THREADS for both, each a
 * contiguous share (≥ 1 MiB); every thread is joined before a transfer
 * returns, on every path; a failure is the failing rank's, and its caller
 * agrees.  Ranks write disjoint bytes, no turns.  The thread count and the
 * threaded pread/pwrite: io_direct_xfer.c. */
#define _GNU_SOURCE /* fdatasync, F_DUPFD_CLOEXEC */
#define _FILE_OFFSET_BITS 64

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "agree.h"
#include "dd_fault.h"
#include "io.h"
#include "io_direct_impl.h"
#include "io_h5.h"

static direct *dir_new(dd_io *io, MPI_Comm comm, const char *path, int writing, dd_err *err)
{
    direct *h = calloc(1, sizeof *h);
    if (h == NULL || (h->path = io_h5_strdup(path)) == NULL) {
        free(h);
        dd_fail(err, DD_ENOMEM, "out of memory opening %s", path);
        return NULL;
    }
    h->writing = writing;
    h->file = H5I_INVALID_HID;
    h->fd = -1;
    MPI_Comm_rank(comm, &h->rank);
    io->ops = &dd_io_direct;
    io->comm = comm;
    io->impl = h;
    return h;
}

static int dir_release(dd_io *io, dd_err *err)
{
    direct *h = io->impl;
    if (h == NULL)
        return DD_OK;
    int rc = DD_OK;
    /* --sync: this rank's writes reach the disk before close (io.h) */
    if (h->fd >= 0 && h->writing && io->durable && fdatasync(h->fd) != 0)
        rc = dd_fail(err, DD_EIO, "cannot flush %s to disk (fdatasync): %s%s", h->path,
                     strerror(errno), errno == ENOSPC ? "; the disk is full" : "");
    /* A write error that the page cache held back can surface at close. */
    if (h->fd >= 0 && close(h->fd) != 0 && rc == DD_OK)
        rc = dd_fail(err, DD_EIO, "cannot close %s: %s%s", h->path, strerror(errno),
                     h->writing ? "; is the disk full?" : "");
    for (int i = 0; i < h->dsets.n && i < h->noff; i++)
        if (h->off[i].fd >= 0)
            close(h->off[i].fd); /* read-only copies: nothing to lose */
    int rc2 = io_h5_table_free(&h->dsets, h->path, err);
    if (rc == DD_OK)
        rc = rc2;
    if (h->file >= 0 && H5Fclose(h->file) < 0 && rc == DD_OK)
        rc = dd_fail(err, DD_EIO, "cannot close %s", h->path);
    if (h->inner.impl != NULL) { /* collective: dir_release runs on every rank */
        rc2 = dd_io_independent.close(&h->inner, err);
        if (rc == DD_OK)
            rc = rc2;
    }
    free(h->off);
    free(h->path);
    free(h);
    io->impl = NULL;
    return rc;
}

/* All ranks hold the file or none does: agree, and release on failure. */
static int dir_settle(dd_io *io, MPI_Comm comm, int rc, dd_err *local, dd_err *err)
{
    rc = dd_agree(comm, rc, local);
    if (rc != DD_OK) {
        dd_fail(err, rc, "%s", local->msg);
        dd_err ignored;
        dd_err_clear(&ignored);
        dir_release(io, &ignored);
    }
    return rc;
}

/* Grows off[] to match the dataset table; NULL when out of memory. */
static place *off_slot(direct *h, int i)
{
    if (i >= h->noff) {
        int n = h->dsets.cap > i ? h->dsets.cap : i + 1;
        place *p = realloc(h->off, (size_t)n * sizeof *p);
        if (p == NULL)
            return NULL;
        h->off = p;
        h->noff = n;
    }
    h->off[i] = (place){NOWHERE, -1};
    return &h->off[i];
}

static int dir_open_read(dd_io *io, MPI_Comm comm, const char *path, dd_err *err)
{
    io_quiet();
    io->impl = NULL;
    if (path == NULL || path[0] == '\0')
        return dd_fail(err, DD_EUSAGE, "no HDF5 file named to read");
    dd_err local;
    dd_err_clear(&local);
    int threads = 1;
    int rc = io_direct_thread_count(comm, DEFAULT_THREADS, &threads, &local);
    direct *h = rc == DD_OK ? dir_new(io, comm, path, 0, &local) : NULL;
    if (h == NULL && rc == DD_OK)
        rc = DD_ENOMEM;
    if (h != NULL) {
        h->threads = threads;
        h->file = io_h5_open_read(path);
        if (h->file < 0) {
            rc = io_h5_explain_open(path, &local);
            if (rc == DD_OK)
                rc = dd_fail(&local, DD_EIO,
                             "cannot open %s for reading with HDF5; check that it exists and "
                             "that no program is writing it",
                             path);
        } else if ((h->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            rc = dd_fail(&local, DD_EIO, "cannot open %s for reading: %s", path, strerror(errno));
    }
    return dir_settle(io, comm, rc, &local, err);
}

/* The descriptor through which dataset `dset`'s offset is a position in
 * the file that holds it.  *ok set: -1 where that is the file behind our
 * h->fd (HDF5's descriptor of it has our device and inode), else a copy of
 * HDF5's descriptor (an external link's target, a mounted file).  *ok
 * clear: that file is not read through HDF5's sec2 driver, so no
 * descriptor is known to be it, and HDF5 reads the dataset. */
static int dset_fd(direct *h, hid_t dset, int *ok)
{
    *ok = 0;
    hid_t fid = H5Iget_file_id(dset);
    hid_t fapl = fid < 0 ? H5I_INVALID_HID : H5Fget_access_plist(fid);
    void *handle = NULL;
    struct stat theirs, ours;
    int fd = -1;
    if (fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 &&
        H5Fget_vfd_handle(fid, H5P_DEFAULT, &handle) >= 0 && handle != NULL &&
        fstat(*(int *)handle, &theirs) == 0 && S_ISREG(theirs.st_mode) &&
        fstat(h->fd, &ours) == 0) {
        if (theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino)
            *ok = 1;
        else if ((fd = fcntl(*(int *)handle, F_DUPFD_CLOEXEC, 0)) >= 0)
            *ok = 1;
    }
    if (fapl >= 0)
        H5Pclose(fapl);
    if (fid >= 0)
        H5Fclose(fid);
    return fd;
}

/* Where dataset d's bytes lie if they are the memory's bytes, else NOWHERE. */
static int classify(direct *h, const io_h5_dset *d, place *where, dd_err *err)
{
    *where = (place){NOWHERE, -1};
    hid_t dcpl = H5Dget_create_plist(d->id), ft = H5Dget_type(d->id);
    int rc = DD_OK, over = 0;
    size_t need = dd_mul3((uint64_t)d->dims[0], (uint64_t)d->dims[1], dd_elsize(d->type), &over);
    if (dcpl < 0 || ft < 0)
        rc = dd_fail(err, DD_EIO, "cannot read the storage layout of dataset \"%s\" in %s", d->name,
                     h->path);
    else if (H5Pget_layout(dcpl) == H5D_CONTIGUOUS && H5Pget_nfilters(dcpl) == 0 &&
             H5Pget_external_count(dcpl) == 0 && H5Tequal(ft, d->mem) > 0 && !over && need > 0 &&
             H5Dget_storage_size(d->id) == need) { /* unallocated: HDF5 gives the fill value */
        haddr_t off = H5Dget_offset(d->id);
        int ok = 0;
        if (off != HADDR_UNDEF && (uint64_t)off <= (uint64_t)INT64_MAX - need)
            where->fd = dset_fd(h, d->id, &ok);
        if (ok)
            where->at = (uint64_t)off;
    }
    if (ft >= 0)
        H5Tclose(ft);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return rc;
}

static int find_dset(direct *h, const char *name, io_h5_dset **d, place **off, dd_err *err)
{
    if (name == NULL)
        return dd_fail(err, DD_EUSAGE, "no dataset named for %s", h->path);
    if ((*d = io_h5_find(&h->dsets, name)) != NULL) {
        *off = &h->off[*d - h->dsets.d];
        return DD_OK;
    }
    if (h->writing)
        return dd_fail(err, DD_EUSAGE, "dataset \"%s\" was not created in %s", name, h->path);
    int rc = io_h5_open_dset(&h->dsets, h->file, h->path, name, d, err);
    if (rc != DD_OK)
        return rc;
    if ((*off = off_slot(h, (int)(*d - h->dsets.d))) == NULL)
        rc = dd_fail(err, DD_ENOMEM, "out of memory opening dataset \"%s\" in %s", name, h->path);
    if (rc == DD_OK)
        rc = classify(h, *d, *off, err);
    if (rc != DD_OK) { /* forget it (the last entry), so that a retry starts afresh */
        if (*off != NULL && (*off)->fd >= 0)
            close((*off)->fd);
        H5Dclose((*d)->id);
        H5Tclose((*d)->mem);
        free((*d)->name);
        h->dsets.n--;
    }
    return rc;
}

/* The fallback for datasets whose bytes are not the memory's: an HDF5 hyperslab. */
static int h5_read(direct *h, const io_h5_dset *d, int64_t row0, int64_t nrows, int64_t col0,
                   int64_t ncols, void *buf, dd_err *err)
{
    hid_t fs, ms;
    if (io_h5_block_spaces(d->id, row0, nrows, col0, ncols, &fs, &ms) < 0)
        return dd_fail(err, DD_EIO, "cannot select a block of dataset \"%s\" in %s", d->name,
                       h->path);
    int rc = DD_OK;
    if (H5Dread(d->id, d->mem, ms, fs, H5P_DEFAULT, buf) < 0)
        rc = io_h5_read_failed(h->path, d->name, row0, nrows, col0, ncols, "", err);
    H5Sclose(ms);
    H5Sclose(fs);
    return rc;
}

static int dir_read_block(dd_io *io, const char *dset, dd_dtype type, int64_t row0, int64_t nrows,
                          int64_t col0, int64_t ncols, void *buf, dd_err *err)
{
    direct *h = io->impl;
    if (h == NULL)
        return dd_fail(err, DD_EUSAGE, "read from an HDF5 file that is not open");
    if (h->writing)
        return dd_fail(err, DD_EUSAGE, "%s was created for writing, not opened for reading",
                       h->path);
    io_h5_dset *d = NULL;
    place *off = NULL;
    int rc = find_dset(h, dset, &d, &off, err);
    if (rc == DD_OK)
        rc = io_h5_check_block(h->path, d, type, row0, nrows, col0, ncols, buf, err);
    if (rc != DD_OK || nrows == 0 || ncols == 0)
        return rc;
    /* DD_FAULT=direct-only: tests learn which datasets are read with pread */
    if (off->at == NOWHERE && dd_fault("direct-only"))
        return dd_fail(err, DD_EIO, "dataset \"%s\" in %s is not read directly but through HDF5",
                       d->name, h->path);
    if (off->at == NOWHERE)
        return h5_read(h, d, row0, nrows, col0, ncols, buf, err);
    return io_direct_transfer(h, d, off, row0, nrows, col0, ncols, buf, err);
}

/* Rank 0: where each new dataset's data lies (NOWHERE when it is empty). */
static int dset_offsets(const char *path, int ndsets, const char *const *names,
                        const int64_t (*dims)[2], uint64_t *offs, dd_err *err)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return dd_fail(err, DD_EIO, "cannot reopen %s after creating it", path);
    int rc = DD_OK;
    for (int i = 0; rc == DD_OK && i < ndsets; i++) {
        hid_t d = H5Dopen2(f, names[i], H5P_DEFAULT);
        haddr_t off = d < 0 ? HADDR_UNDEF : H5Dget_offset(d);
        offs[i] = off == HADDR_UNDEF ? NOWHERE : (uint64_t)off;
        if (d < 0 || (off == HADDR_UNDEF && dims[i][0] > 0 && dims[i][1] > 0))
            rc =
                dd_fail(err, DD_EIO, "cannot find where dataset \"%s\" lies in %s", names[i], path);
        if (d >= 0 && H5Dclose(d) < 0 && rc == DD_OK)
            rc = dd_fail(err, DD_EIO, "cannot close dataset \"%s\" of %s", names[i], path);
    }
    if (H5Fclose(f) < 0 && rc == DD_OK)
        rc = dd_fail(err, DD_EIO, "cannot close %s", path);
    return rc;
}

/* The independent path creates the file (rank 0: datasets contiguous and
 * allocated, space reserved; agreed); rank 0 finds the datasets' offsets and
 * every rank opens the file for pwrite. */
static int dir_create(dd_io *io, MPI_Comm comm, const char *path, int ndsets,
                      const char *const *names, const int64_t (*dims)[2], dd_dtype type,
                      dd_err *err)
{
    io->impl = NULL;
    dd_io inner = {0};
    int threads = 1;
    int rc = io_direct_thread_count(comm, DEFAULT_WRITE_THREADS, &threads, err);
    /* the bytes written are the memory's: the file's type must be the memory's
     * (an invalid type is the independent path's to refuse) */
    hid_t mt = io_h5_memtype(dd_dtype_valid((int)type) ? type : DD_F64, IO_CX_RI);
    hid_t ft = io_h5_filetype(dd_dtype_valid((int)type) ? type : DD_F64);
    if (rc == DD_OK && (mt < 0 || ft < 0))
        rc = dd_fail(err, DD_EIO, "cannot make the HDF5 type of %s", path);
    else if (rc == DD_OK && H5Tequal(mt, ft) <= 0)
        rc = dd_fail(err, DD_EUNSUP, "--io direct needs a little-endian host; use independent");
    if (mt >= 0)
        H5Tclose(mt);
    if (ft >= 0)
        H5Tclose(ft);
    rc = dd_agree(comm, rc, err);
    if (rc == DD_OK)
        rc = dd_io_independent.create(&inner, comm, path, ndsets, names, dims, type, err);
    if (rc != DD_OK)
        return rc;
    dd_err local;
    dd_err_clear(&local);
    direct *h = dir_new(io, comm, path, 1, &local);
    uint64_t *offs = calloc((size_t)ndsets, sizeof *offs);
    if (h != NULL)
        h->inner = inner, h->threads = threads;
    if (h == NULL || offs == NULL)
        rc = dd_fail(&local, DD_ENOMEM, "out of memory creating %s", path);
    for (int i = 0; rc == DD_OK && i < ndsets; i++)
        if (io_h5_add(&h->dsets, names[i], H5I_INVALID_HID, dims[i], type, IO_CX_RI) == NULL ||
            off_slot(h, i) == NULL)
            rc = dd_fail(&local, DD_ENOMEM, "out of memory creating %s", path);
    if (rc == DD_OK && h->rank == 0)
        rc = dset_offsets(path, ndsets, names, dims, offs, &local);
    rc = dd_agree(comm, rc, &local);
    if (rc == DD_OK && MPI_Bcast(offs, ndsets, MPI_UINT64_T, 0, comm) != MPI_SUCCESS)
        rc = dd_fail(&local, DD_EFAIL, "MPI_Bcast failed while creating %s", path);
    for (int i = 0; rc == DD_OK && i < ndsets; i++)
        h->off[i].at = offs[i]; /* in the file we open: -1, our descriptor */
    if (rc == DD_OK && (h->fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        rc = dd_fail(&local, DD_EIO, "cannot open %s for writing on rank %d: %s", path, h->rank,
                     strerror(errno));
    free(offs);
    if (h == NULL) { /* agree, and close the file with the others */
        rc = dd_agree(comm, rc, &local);
        dd_io_independent.close(&inner, &local);
        return dd_fail(err, rc, "%s", local.msg);
    }
    return dir_settle(io, comm, rc, &local, err);
}

static int dir_write_block(dd_io *io, const char *dset, dd_dtype type, int64_t row0, int64_t nrows,
                           int64_t col0, int64_t ncols, const void *buf, dd_err *err)
{
    direct *h = io->impl;
    if (h == NULL)
        return dd_fail(err, DD_EUSAGE, "write to an HDF5 file that is not open");
    if (!h->writing)
        return dd_fail(err, DD_EUSAGE, "%s was opened for reading, not writing", h->path);
    io_h5_dset *d = NULL;
    place *off = NULL;
    int rc = find_dset(h, dset, &d, &off, err);
    if (rc == DD_OK)
        rc = io_h5_check_block(h->path, d, type, row0, nrows, col0, ncols, buf, err);
    if (rc != DD_OK || nrows == 0 || ncols == 0)
        return rc;
    if (off->at == NOWHERE) /* cannot happen: create() found every non-empty dataset */
        return dd_fail(err, DD_EIO, "dataset \"%s\" in %s has no place in the file", d->name,
                       h->path);
    /* pwrite only reads the buffer; the job is shared with reads */
    return io_direct_transfer(h, d, off, row0, nrows, col0, ncols, (char *)(uintptr_t)buf, err);
}

/* Once every rank has written (a barrier), the independent path's: rank 0
 * alone writes its own values with HDF5; agreed. */
static int dir_set_attrs(dd_io *io, const char *dset, const dd_attr *attrs, int nattrs, dd_err *err)
{
    direct *h = io->impl;
    if (h == NULL)
        return dd_fail(err, DD_EUSAGE, "attributes set on an HDF5 file that is not open");
    if (!h->writing) /* the same on every rank */
        return dd_fail(err, DD_EUSAGE, "%s was opened for reading, not writing", h->path);
    int brc = MPI_Barrier(io->comm);
    int rc = dd_io_independent.set_attrs(&h->inner, dset, attrs, nattrs, err);
    if (brc != MPI_SUCCESS && rc == DD_OK)
        rc = dd_fail(err, DD_EFAIL, "MPI_Barrier failed while writing %s", h->path);
    return rc;
}
static int dir_close(dd_io *io, dd_err *err)
{
    if (io->impl == NULL)
        return DD_OK; /* on every rank: open and create fail on all ranks or none */
    MPI_Comm comm = io->comm;
    dd_err local;
    dd_err_clear(&local);
    /* Agreed: a write lost on one rank fails the file everywhere; and once
     * close returns anywhere, no rank holds the file any more. */
    return dir_settle(io, comm, dir_release(io, &local), &local, err);
}

const dd_io_ops dd_io_direct = {
    .name = "direct",
    .open_read = dir_open_read,
    .create = dir_create,
    .read_block = dir_read_block,
    .write_block = dir_write_block,
    .set_attrs = dir_set_attrs,
    .close = dir_close,
};
