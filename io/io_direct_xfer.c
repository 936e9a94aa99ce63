/* io_direct_xfer.c — the direct path's bytes in motion (io_direct.c):
 * how many threads a transfer may use (min(most, cores per rank), or
 * DD_IO_THREADS), and a block moved between memory and the file with
 * pread/pwrite, each thread a contiguous share of ≥ 1 MiB, each call at
 * most 1 GiB and resumed after EINTR or a short count.  Every thread is
 * joined before the transfer returns, on every path; the first failure
 * names the rows, columns and byte, and a read past the end of a
 * truncated file says how many bytes are missing. */
#define _GNU_SOURCE /* pread, pwrite, sched_getaffinity, CPU_COUNT */
#define _FILE_OFFSET_BITS 64

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "dd_fault.h"
#include "dd_knobs.h"
#include "io.h"
#include "io_direct_impl.h"
#include "io_h5.h"

_Static_assert(sizeof(off_t) == 8, "the direct path needs 64-bit file offsets");
#define MIN_SHARE ((size_t)1 << 20)   /* bytes per thread, at least */
#define MAX_SYSCALL ((size_t)1 << 30) /* Linux moves at most ~2 GiB per call */

/* Threads per transfer: min(most, this rank's cores), or DD_IO_THREADS. */
int io_direct_thread_count(MPI_Comm comm, int most, int *out, dd_err *err)
{
    /* Collective on every rank (the node split), before any check can fail. */
    int nlocal = 1;
    MPI_Comm node;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        if (MPI_Comm_size(node, &nlocal) != MPI_SUCCESS || nlocal < 1)
            nlocal = 1;
        MPI_Comm_free(&node);
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN), per;
    cpu_set_t set;
    long mine = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : online;
    per = mine > 0 && mine < online ? mine : online / nlocal; /* bound: its own cores */
    *out = per < 1 ? 1 : per > most ? most : (int)per;
    char msg[DD_ERRLEN];
    if (dd_knob_error(DDK_IO_THREADS, msg, sizeof msg))
        return dd_fail(err, DD_EUSAGE, "%s", msg);
    long long v = dd_knob_int(DDK_IO_THREADS); /* 1..MAX_THREADS, 0: auto */
    if (v > 0) /* the bound again: the threads' arrays have MAX_THREADS places */
        *out = v > MAX_THREADS ? MAX_THREADS : (int)v;
    return DD_OK;
}

typedef struct {
    int fd, writing, whole; /* whole: whole rows, so any share is one run in the file */
    char *buf;              /* the block in memory, row-major */
    uint64_t at, stride;    /* the block's first element in the file; bytes from row to row */
    int64_t ncols;
    size_t es;
} job;

typedef struct {
    const job *j;
    int64_t e0, e1;  /* this share: elements [e0, e1) of the block */
    int fail;        /* tests (DD_FAULT=write-thread): EIO after half the share */
    int err;         /* errno of the first failure; -1: the file ended, or nothing was written */
    uint64_t err_at; /* its byte offset in the file */
} share;

static int move_all(share *s, char *p, size_t n, uint64_t off)
{
    while (n > 0) {
        size_t len = n < MAX_SYSCALL ? n : MAX_SYSCALL;
        int fd = s->j->fd;
        ssize_t k = s->j->writing ? pwrite(fd, p, len, (off_t)off) : pread(fd, p, len, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            s->err = k < 0 ? errno : -1;
            s->err_at = off;
            return -1;
        }
        p += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return 0;
}

static void *share_run(void *arg)
{
    share *s = arg;
    const job *j = s->j;
    int64_t end = s->fail ? s->e0 + (s->e1 - s->e0) / 2 : s->e1;
    for (int64_t e = s->e0; e < end;) {
        int64_t r = e / j->ncols, c = e % j->ncols;
        int64_t n = j->whole || j->ncols - c > end - e ? end - e : j->ncols - c;
        uint64_t at = j->at + (uint64_t)r * j->stride + (uint64_t)c * j->es;
        if (move_all(s, j->buf + (size_t)e * j->es, (size_t)n * j->es, at) < 0)
            break;
        e += n;
    }
    if (s->fail && s->err == 0) {
        s->err = EIO;
        s->err_at =
            j->at + (uint64_t)(end / j->ncols) * j->stride + (uint64_t)(end % j->ncols) * j->es;
    }
    return NULL;
}

/* Moves a block (checked, non-empty) between `buf` and the file, its data
 * at `where`, with up to h->threads threads; a share whose thread cannot
 * start is moved here. */
int io_direct_transfer(direct *h, const io_h5_dset *d, const place *where, int64_t row0,
                       int64_t nrows, int64_t col0, int64_t ncols, char *buf, dd_err *err)
{
    size_t es = dd_elsize(d->type);
    uint64_t stride = (uint64_t)d->dims[1] * es,
             at = where->at + (uint64_t)row0 * stride + (uint64_t)col0 * es;
    int fd = where->fd >= 0 ? where->fd : h->fd;
    job j = {fd, h->writing, ncols == d->dims[1], buf, at, stride, ncols, es};
    int64_t elems = nrows * ncols, t = (int64_t)((size_t)elems * es / MIN_SHARE);
    t = t < 1 ? 1 : t > h->threads ? h->threads : t;
    share s[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    int started[MAX_THREADS];
    /* tests: the last share fails half way (on a thread of its own where t > 1) */
    int64_t fail = h->writing && dd_fault("write-thread") ? t - 1 : -1;
    for (int64_t k = 0; k < t; k++) {
        s[k] = (share){.j = &j, .e0 = elems * k / t, .e1 = elems * (k + 1) / t, .fail = k == fail};
        started[k] = k > 0 && pthread_create(&tid[k], NULL, share_run, &s[k]) == 0;
    }
    for (int64_t k = 0; k < t; k++)
        if (!started[k])
            share_run(&s[k]);
    int rc = DD_OK;
    for (int64_t k = 0; k < t; k++) {
        int jr = started[k] ? pthread_join(tid[k], NULL) : 0;
        if (rc != DD_OK || (s[k].err == 0 && jr == 0))
            continue;
        struct stat st;
        uint64_t end = where->at + (uint64_t)d->dims[0] * stride; /* the dataset's data end */
        if (jr == 0 && s[k].err < 0 && !h->writing && fstat(fd, &st) == 0 &&
            (uint64_t)st.st_size < end) {
            rc = dd_fail(err, DD_EUSAGE,
                         "%s is truncated: it ends at byte %llu, but the data of dataset \"%s\" "
                         "run to byte %llu (%llu bytes are missing); the copy or write that made "
                         "it was cut short: copy or write it again",
                         h->path, (unsigned long long)st.st_size, d->name, (unsigned long long)end,
                         (unsigned long long)(end - (uint64_t)st.st_size));
            continue;
        }
        const char *why = jr != 0        ? strerror(jr)
                          : s[k].err > 0 ? strerror(s[k].err)
                          : h->writing   ? "nothing was written; is the disk full?"
                                         : "the file ends there";
        rc = dd_fail(err, DD_EIO,
                     "cannot %s rows %lld+%lld, columns %lld+%lld of dataset \"%s\" in %s at "
                     "byte %llu: %s",
                     h->writing ? "write" : "read", (long long)row0, (long long)nrows,
                     (long long)col0, (long long)ncols, d->name, h->path,
                     (unsigned long long)s[k].err_at, why);
    }
    return rc;
}
