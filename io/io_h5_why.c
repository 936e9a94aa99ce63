/* io_h5_why.c — why an HDF5 call failed (io_h5.h), read from HDF5's error
 * stack right after the failed call (any other HDF5 call clears it): a
 * truncated file or one another program holds open for writing, after an
 * open (io_h5_explain_open); a failed checksum or filter, or HDF5's
 * innermost reason, after a read (io_h5_read_failed).  The stack is walked,
 * never printed. */
#include <stdio.h>
#include <string.h>

#include <hdf5.h>

#include "io.h"
#include "io_h5.h"

/* What HDF5's error stack says about the call that just failed. */
typedef struct {
    int truncated, locked, checksum, filter;
    unsigned long long eof, base, stored;
    char inner[160]; /* the innermost description */
} why_failed;

static herr_t why_walk(unsigned n, const H5E_error2_t *e, void *op)
{
    why_failed *w = op;
    const char *d = e->desc ? e->desc : "";
    if (n == 0)
        snprintf(w->inner, sizeof w->inner, "%s", d);
    const char *at = strstr(d, "eof = ");
    if (e->min_num == H5E_TRUNCATED && at &&
        sscanf(at, "eof = %llu, sblock->base_addr = %llu, stored_eof = %llu", &w->eof, &w->base,
               &w->stored) == 3)
        w->truncated = 1;
    if (e->min_num == H5E_CANTLOCKFILE || strstr(d, "already open for write"))
        w->locked = 1;
    if (strstr(d, "Fletcher32"))
        w->checksum = 1;
    if (e->maj_num == H5E_PLINE)
        w->filter = 1;
    return 0;
}

static void why(why_failed *w)
{
    memset(w, 0, sizeof *w);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, why_walk, w);
}

int io_h5_explain_open(const char *path, dd_err *err)
{
    why_failed w;
    why(&w);
    if (w.truncated) {
        unsigned long long have = w.eof + w.base, need = w.stored > have ? w.stored : have;
        return dd_fail(err, DD_EUSAGE,
                       "%s is truncated: it is %llu bytes long, but its datasets and metadata "
                       "need %llu (%llu bytes, %.0f%%, are missing); the copy or write that "
                       "made it was cut short: copy or write it again",
                       path, have, need, need - have,
                       need ? 100.0 * (double)(need - have) / (double)need : 0.0);
    }
    if (w.locked)
        return dd_fail(err, DD_EIO,
                       "cannot open %s: another program has it open for writing; if it is "
                       "writing it, wait for it to finish (on file systems without locks set "
                       "HDF5_USE_FILE_LOCKING=FALSE; a file marked open by a program that died "
                       "is cleared with h5clear -s)",
                       path);
    return DD_OK;
}

int io_h5_read_failed(const char *path, const char *dset, int64_t row0, int64_t nrows, int64_t col0,
                      int64_t ncols, const char *how, dd_err *err)
{
    why_failed w;
    why(&w);
    char block[128];
    snprintf(block, sizeof block, "rows %lld+%lld, columns %lld+%lld", (long long)row0,
             (long long)nrows, (long long)col0, (long long)ncols);
    if (w.checksum)
        return dd_fail(err, DD_EUSAGE,
                       "the fletcher32 checksum of dataset \"%s\" in %s failed reading %s: the "
                       "file is corrupt (damaged on disk or in a copy); restore it from a good "
                       "copy or write it again",
                       dset, path, block);
    if (w.filter)
        return dd_fail(err, DD_EUSAGE,
                       "the data of dataset \"%s\" in %s could not be decoded reading %s (HDF5: "
                       "%s): the file is corrupt; restore it from a good copy or write it again",
                       dset, path, block, w.inner);
    return dd_fail(err, DD_EIO, "cannot read %s of dataset \"%s\" in %s%s (HDF5: %s)", block, dset,
                   path, how, w.inner[0] ? w.inner : "no reason given");
}
