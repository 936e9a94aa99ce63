/* io_output_checks.c — the checks made before anything is computed, beyond
 * those of the output's own name (io_output_prepare, io_output.c): a side
 * output such as --json must name neither the input nor the output and
 * must be writable (io_output_check_side), and there must be room for what
 * will be written: the file-size limit for the output, that and the free
 * space for the side file (io_output_check_limit, io_output_check_side_room).
 * A run refused here has computed nothing and written nothing (io.h). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include "agree.h"
#include "io.h"
#include "io_h5.h"
#include "io_output_impl.h"

/* ---- side outputs ------------------------------------------------------------------ */

/* The file `path` names, as one string whether or not it exists yet: the
 * real path of its directory (links, "." and ".." resolved), then its base
 * name; where that name is a symbolic link (dangling too) its target, read
 * relative to the link's directory, the same way.  -1 where a directory
 * cannot be resolved or the links go on too long. */
static int resolve_name(const char *path, char *out, size_t len)
{
    char cur[PATH_MAX], dir[PATH_MAX], real[PATH_MAX], target[PATH_MAX];
    if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur)
        return -1;
    for (int hops = 0; hops < 40; hops++) { /* Linux's own bound on a chain of links */
        const char *base;
        if (io_output_split_path(cur, dir, sizeof dir, &base) != 0)
            return -1;
        if (!base[0] || !strcmp(base, ".") || !strcmp(base, "..")) /* a directory */
            return realpath(cur, real) && snprintf(out, len, "%s", real) < (int)len ? 0 : -1;
        if (!realpath(dir, real))
            return -1;
        int n = snprintf(out, len, "%s/%s", strcmp(real, "/") ? real : "", base);
        if (n < 0 || (size_t)n >= len)
            return -1;
        struct stat st;
        if (lstat(out, &st) != 0 || !S_ISLNK(st.st_mode))
            return 0;
        ssize_t t = readlink(out, target, sizeof target - 1);
        if (t < 0)
            return -1;
        target[t] = '\0';
        n = target[0] == '/' ? snprintf(cur, sizeof cur, "%s", target)
                             : snprintf(cur, sizeof cur, "%s/%s", real, target);
        if (n < 0 || (size_t)n >= sizeof cur)
            return -1;
    }
    return -1;
}

/* Whether p and q name one file: the same inode where both exist, else the
 * same resolved directory and name (a file that does not exist yet, named
 * "c.h5", "./c.h5", "/abs/c.h5", "d/../c.h5" or through a link). */
static int same_name(const char *p, const char *q)
{
    char rp[PATH_MAX + 256], rq[PATH_MAX + 256];
    if (!p || !q)
        return 0;
    if (!strcmp(p, q) || io_output_same_file(p, q))
        return 1;
    return resolve_name(p, rp, sizeof rp) == 0 && resolve_name(q, rq, sizeof rq) == 0 &&
           !strcmp(rp, rq);
}

/* Why `side` cannot take a record (a message), or NULL: it must be a
 * regular file that can be written, or a new name in a writable directory
 * (a directory, FIFO or device is refused: a FIFO would block the run at
 * its end). */
static const char *side_unfit(const char *side, char *why, size_t len)
{
    struct stat st;
    char dir[4096];
    const char *base;
    if (stat(side, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return "it is a directory";
        if (!S_ISREG(st.st_mode)) {
            snprintf(why, len, "it is %s, not a regular file", io_output_kind_of(st.st_mode));
            return why;
        }
        if (access(side, W_OK) != 0) {
            snprintf(why, len, "%s", strerror(errno));
            return why;
        }
        return NULL;
    }
    if (errno != ENOENT || io_output_split_path(side, dir, sizeof dir, &base) != 0 || !base[0] ||
        access(dir, W_OK | X_OK) != 0) {
        snprintf(why, len, "%s", strerror(errno));
        return why;
    }
    return NULL;
}

int io_output_check_side(MPI_Comm comm, const char *side, const char *option,
                         const char *input_path, const char *output_path, dd_err *err)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    dd_err local;
    dd_err_clear(&local);
    int rc = DD_OK;
    if (rank == 0 && side) {
        char why[160];
        const char *unfit;
        int is_in = same_name(side, input_path), is_out = same_name(side, output_path);
        if (is_in || is_out)
            rc = dd_fail(&local, DD_EUSAGE, "%s %s names the %s file; give it a file of its own",
                         option, side, is_in ? "input" : "output");
        else if ((unfit = side_unfit(side, why, sizeof why)) != NULL)
            rc = dd_fail(&local, DD_EUSAGE, "%s %s cannot be written (%s); choose another file",
                         option, side, unfit);
    }
    return io_bcast_verdict(comm, rc, &local, err);
}

/* ---- room for what will be written ---------------------------------------------- */

/* "12.3 MiB": a size for messages. */
static const char *human(double bytes, char *buf, size_t len)
{
    const char *unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = 0;
    while (bytes >= 1024 && u < 6) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, len, u ? "%.3g %s" : "%.0f %s", bytes, unit[u]);
    return buf;
}

/* This process's file-size limit (RLIMIT_FSIZE) in bytes; UINT64_MAX: none. */
static uint64_t size_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return UINT64_MAX;
    return (uint64_t)rl.rlim_cur;
}

int io_output_check_limit(MPI_Comm comm, const char *path, uint64_t bytes, dd_err *err)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    uint64_t most = size_limit();
    int rc = DD_OK;
    if (most < bytes) {
        char need[32], may[32];
        rc = dd_fail(err, DD_EIO,
                     "the output %s will be %s, but this process may write files of at most %s "
                     "(the file-size limit, ulimit -f, on rank %d); raise it (ulimit -f "
                     "unlimited) or write a smaller output",
                     path ? path : "", human((double)bytes, need, sizeof need),
                     human((double)most, may, sizeof may), rank);
    }
    return dd_agree(comm, rc, err);
}

int io_output_check_side_room(MPI_Comm comm, const char *side, const char *option, uint64_t bytes,
                              dd_err *err)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    dd_err local;
    dd_err_clear(&local);
    int rc = DD_OK;
    if (rank == 0 && side) {
        char dir[4096], need[32], have[32];
        const char *base;
        struct stat st;
        struct statvfs vs;
        uint64_t now = stat(side, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
        uint64_t most = size_limit();
        int fs = io_output_split_path(side, dir, sizeof dir, &base) == 0 && statvfs(dir, &vs) == 0;
        double avail = fs ? (double)vs.f_bavail * (double)vs.f_frsize : -1;
        if (most < now || most - now < bytes)
            rc = dd_fail(&local, DD_EIO,
                         "%s %s cannot take the record: it would grow past %s, the file-size "
                         "limit (ulimit -f); raise it or choose another file",
                         option, side, human((double)most, have, sizeof have));
        else if (fs && avail < (double)bytes)
            rc = dd_fail(&local, DD_EIO,
                         "not enough space for the record: %s %s needs about %s and its file "
                         "system has %s free; free space or choose another file",
                         option, side, human((double)bytes, need, sizeof need),
                         human(avail, have, sizeof have));
    }
    return io_bcast_verdict(comm, rc, &local, err);
}
