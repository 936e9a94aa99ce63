/* io_output_signals.c — an interrupted run leaves no temporary behind
 * (the output discipline, io_output.c).
 *
 * From io_output_prepare on, a signal a batch system sends (TERM, INT, HUP)
 * removes the temporary before the process dies, and so does a rank whose
 * launcher died without signalling it (the launcher's watch below).  Writes
 * go in pieces (io_write_pieces), so that a handler never waits long behind
 * one write: a launcher gives it about a second before SIGKILL.  The commit
 * and the abort disarm both. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agree.h"
#include "dd_launch.h"
#include "io.h"
#include "io_output_impl.h"

/* ---- the temporary, and what a signal removes ------------------------------------ */

/* Paths the signal handler removes; written before it is armed. */
static char sig_file[4200], sig_owner[4200], sig_dir[4100];
static volatile sig_atomic_t sig_armed;

void io_output_remove_temporary(const char *file, const char *owner, const char *dir)
{
    unlink(file);
    unlink(owner);
    rmdir(dir);
}

/* Async-signal-safe: unlink, rmdir, signal, raise. */
static void on_signal(int sig)
{
    if (sig_armed)
        io_output_remove_temporary(sig_file, sig_owner, sig_dir);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void start_watch(void);

void io_output_arm_signals(const dd_output *out)
{
    snprintf(sig_file, sizeof sig_file, "%s", out->tmp);
    snprintf(sig_owner, sizeof sig_owner, "%s/" OWNER_FILE, out->dir);
    snprintf(sig_dir, sizeof sig_dir, "%s", out->dir);
    sig_armed = 1;
    const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
    start_watch();
}

/* The launcher's watch.  When mpirun dies at once (two SIGTERMs close
 * together, as timeout(1) sends one to mpirun and one to its process
 * group; Ctrl-C twice), its ranks get no SIGTERM at all: Open MPI ends
 * them with _exit about a second later, and no handler runs.  So while the
 * temporary exists, a thread of every rank whose parent is a launcher
 * (dd_launch.h) looks every 100 ms whether the parent is still there (a
 * rank whose parent died is given another: getppid changes); when it is
 * gone, the thread removes the temporary and ends the process as SIGTERM
 * would.  It needs no signal to arrive and works while another thread is
 * inside a long write.  (A run without a launcher is not watched: its
 * parent is a shell, and a run left to itself by nohup must go on.) */
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watch_wake = PTHREAD_COND_INITIALIZER;
static pthread_t watch_tid;
static int watching, watch_stop;
static long watch_parent;

static void *watch_launcher(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals are for the other threads */
    pthread_mutex_lock(&watch_lock);
    while (!watch_stop) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 100 * 1000 * 1000;
        if (t.tv_nsec >= 1000000000) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&watch_wake, &watch_lock, &t);
        if (!watch_stop && sig_armed && (long)getppid() != watch_parent) {
            io_output_remove_temporary(sig_file, sig_owner, sig_dir);
            signal(SIGTERM, SIG_DFL);
            sigset_t term;
            sigemptyset(&term);
            sigaddset(&term, SIGTERM);
            pthread_sigmask(SIG_UNBLOCK, &term, NULL);
            raise(SIGTERM); /* the default action: the whole process ends */
        }
    }
    pthread_mutex_unlock(&watch_lock);
    return NULL;
}

static void start_watch(void)
{
    watch_parent = dd_launcher_pid();
    if (watching || watch_parent <= 1)
        return;
    watch_stop = 0;
    watching = pthread_create(&watch_tid, NULL, watch_launcher, NULL) == 0;
}

static void stop_watch(void)
{
    if (!watching)
        return;
    pthread_mutex_lock(&watch_lock);
    watch_stop = 1;
    pthread_cond_signal(&watch_wake);
    pthread_mutex_unlock(&watch_lock);
    pthread_join(watch_tid, NULL);
    watching = 0;
}

void io_output_disarm_signals(void)
{
    sig_armed = 0;
    stop_watch();
}

/* ---- writes in pieces -------------------------------------------------------------- */

int io_write_pieces(dd_io *io, const char *dset, dd_dtype type, int64_t row0, int64_t nrows,
                    int64_t col0, int64_t ncols, const void *buf, dd_err *err)
{
    size_t es = dd_elsize(type), per = IO_PIECE_BYTES / es; /* elements in a piece */
    int whole = (uint64_t)ncols <= per;                         /* whole rows per piece */
    int64_t rows_per = whole && ncols > 0 ? (int64_t)(per / (size_t)ncols) : 1;
    int64_t segs = whole ? 1 : (ncols + (int64_t)per - 1) / (int64_t)per; /* pieces per row */
    long long mine = nrows <= 0 || ncols <= 0 ? 0
                     : whole                  ? (nrows + rows_per - 1) / rows_per
                                              : nrows * segs,
              most = 0;
    int rc = dd_mpi_check(MPI_Allreduce(&mine, &most, 1, MPI_LONG_LONG, MPI_MAX, io->comm),
                          "MPI_Allreduce of the write's piece count", err);
    if (rc != DD_OK)
        return rc;
    const char *p = buf;
    for (long long i = 0; i < most; i++) {
        int64_t r = 0, h = 0, c = 0, w = 0;
        if (i < mine && rc == DD_OK) { /* after a failure, empty pieces: the others' calls */
            r = whole ? i * rows_per : i / segs;
            h = whole ? (nrows - r < rows_per ? nrows - r : rows_per) : 1;
            c = whole ? 0 : (i % segs) * (int64_t)per;
            w = whole ? ncols : (ncols - c < (int64_t)per ? ncols - c : (int64_t)per);
        }
        dd_err e;
        dd_err_clear(&e);
        int rci = io->ops->write_block(io, dset, type, row0 + r, h, col0 + c, w,
                                       h && w ? p + ((size_t)r * (size_t)ncols + (size_t)c) * es
                                              : NULL,
                                       &e);
        if (rc == DD_OK && rci != DD_OK) {
            rc = rci;
            *err = e;
        }
    }
    return rc;
}
