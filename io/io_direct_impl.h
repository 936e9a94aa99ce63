/* io_direct_impl.h — what the direct path's two files share, private to
 * io/: io_direct.c (the handle, opening and creating, where each dataset's
 * bytes lie, the HDF5 fallback, the ops table) and io_direct_xfer.c (the
 * thread count, and the threaded pread/pwrite of a block).  io.h is the
 * interface. */
#ifndef DD_IO_DIRECT_IMPL_H
#define DD_IO_DIRECT_IMPL_H

#include <stdint.h>

#include <hdf5.h>

#include "io.h"
#include "io_h5.h"

/* MAX_THREADS: the top of DD_IO_THREADS's range in the knobs' table (knobs.c) */
enum { MAX_THREADS = 256, DEFAULT_THREADS = 16, DEFAULT_WRITE_THREADS = 4 };
#define NOWHERE UINT64_MAX /* a dataset that is not read or written directly */

/* Where a dataset's bytes lie: at `at` (or NOWHERE) in the file behind `fd`
 * (-1: the handle's own descriptor; else a copy this handle closes). */
typedef struct {
    uint64_t at;
    int fd;
} place;

typedef struct {
    int writing; /* opened by create() */
    char *path;
    hid_t file;        /* reading: HDF5, read-only, for lookups and the fallback */
    int fd;            /* the POSIX file, for pread/pwrite */
    int rank, threads; /* threads per transfer, at most */
    io_h5_table dsets; /* reading: opened on first use; writing: names and shapes */
    place *off;        /* off[i]: where dsets.d[i]'s data lies */
    int noff;
    dd_io inner; /* writing: the independent path's handle, for the structure */
} direct;

/* io_direct_xfer.c */
/* Threads per transfer: min(most, this rank's cores), or DD_IO_THREADS
 * (collective on every rank: the node split). */
int io_direct_thread_count(MPI_Comm comm, int most, int *out, dd_err *err);
/* Moves a block (checked, non-empty) between `buf` and the file, its data
 * at `where`, with up to h->threads threads. */
int io_direct_transfer(direct *h, const io_h5_dset *d, const place *where, int64_t row0,
                       int64_t nrows, int64_t col0, int64_t ncols, char *buf, dd_err *err);

#endif
