/* io_output.c — the output-file discipline (io.h): refuse what must not be
 * replaced, write under a temporary name beside the output, commit by
 * rename, remove the temporary on failure.  Rank 0 does the file-system
 * work and broadcasts its verdict, so every rank returns the same rc and
 * message and no two ranks race on the file system. */
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

/* Every rank returns rank 0's rc and, on failure, rank 0's message. */
int io_bcast_verdict(MPI_Comm comm, int rc, const dd_err *local, dd_err *err)
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
    rc = io_bcast_verdict(comm, rc, &local, err);
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
    return io_bcast_verdict(comm, rc, &local, err);
}

/* No communication: it runs on error paths, where a collective could hang. */
void io_output_abort(MPI_Comm comm, const char *tmp)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0 && tmp && tmp[0])
        unlink(tmp);
}
