/* io_output.c — the output-file discipline (io.h): prepare, commit, abort.
 *
 * What it guarantees: the output appears under its name only complete and
 * verified, by one rename (or link) at the end; an existing output is
 * replaced only with --force and only when it is a regular file; nothing is
 * ever written through a name an attacker could have planted, because the
 * HDF5 file is written inside a directory this run created with mkdtemp
 * (mode 0700, fresh, so nobody else can put a link there); and the next run
 * removes the temporaries of its output whose owner on this host is gone.
 * What removes the temporary when a run is interrupted (signals, the
 * launcher's watch, writes in pieces) is io_output_signals.c; the room
 * checks made before the read (file-size limit, the record's space) and
 * the name checks of side files are io_output_checks.c; io_output_impl.h
 * is what the three share.
 *
 * Rank 0 does the file-system work and broadcasts its verdict, so every rank
 * returns the same rc and message and no two ranks race on the file system. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* mkdtemp, dirfd under strict C11 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "dd_fault.h"
#include "io.h"
#include "io_h5.h"
#include "io_output_impl.h"

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

/* ---- the temporary ---------------------------------------------------------------- */

/* Splits `path` into its directory ("." when there is none) and base name. */
int io_output_split_path(const char *path, char *dir, size_t dlen, const char **base)
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

/* The temporary directory's name: ".<name>.tmp.XXXXXX" where that fits in
 * the file system's longest name, else the fixed-length SHORT_TMP (an
 * output name of up to NAME_MAX bytes is legal, and the long form adds 12).
 * Either way the owner file names the output, so the sweep below tells
 * whose a temporary is. */
#define SHORT_TMP ".dgemm-dist.tmp."

static long name_max(const char *dir)
{
    long n = pathconf(dir, _PC_NAME_MAX);
    return n > 0 ? n : NAME_MAX;
}

/* The owner file's text: "<host> <pid>\n<output name>\n".  Parsed back into
 * who, pid and target (empty where a file of an older version names no
 * output); 0 when it does not parse. */
static int parse_owner(const char *buf, size_t n, char who[256], long *pid, char *target,
                       size_t tlen)
{
    if (sscanf(buf, "%255s %ld", who, pid) != 2)
        return 0;
    const char *nl = memchr(buf, '\n', n);
    target[0] = '\0';
    if (nl != NULL && (size_t)(nl + 1 - buf) < n) {
        size_t len = n - (size_t)(nl + 1 - buf);
        if (buf[n - 1] == '\n')
            len--;
        if (len >= tlen)
            return 0;
        memcpy(target, nl + 1, len);
        target[len] = '\0';
    }
    return 1;
}

/* Removes stale temporaries of this output in `dir`: directories of ours
 * named for it (either form) whose owner file names this host, a process
 * that is gone and this output (an owner file naming none, from an older
 * version, counts for the long form only).  unlinkat never follows a link,
 * so nothing outside them is touched. */
static void remove_stale(const char *dir, const char *base)
{
    char prefix[512], host[256] = "";
    if (snprintf(prefix, sizeof prefix, ".%s.tmp.", base) >= (int)sizeof prefix)
        return;
    gethostname(host, sizeof host - 1);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        int long_form = !strncmp(e->d_name, prefix, strlen(prefix));
        if ((!long_form && strncmp(e->d_name, SHORT_TMP, strlen(SHORT_TMP))) ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode) ||
            st.st_uid != geteuid())
            continue;
        int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        int fd = sub < 0 ? -1 : openat(sub, OWNER_FILE, O_RDONLY | O_NOFOLLOW);
        char buf[640] = "", who[256] = "", target[512];
        long pid = 0;
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
        if (n > 0 && parse_owner(buf, (size_t)n, who, &pid, target, sizeof target) &&
            (target[0] ? !strcmp(target, base) : long_form) && !strcmp(who, host) && pid > 0 &&
            kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            unlinkat(sub, base, 0);
            unlinkat(sub, OWNER_FILE, 0);
            unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
        }
        if (fd >= 0)
            close(fd);
        if (sub >= 0)
            close(sub);
    }
    closedir(d);
}

/* Rank 0: a fresh private directory beside the output, holding an owner
 * file (host, pid and the output's name, for the stale sweep) and, later,
 * the HDF5 file under the output's own name. */
static int make_temporary(dd_output *out, const char *dir, const char *base, dd_err *err)
{
    /* a bare output name keeps a relative temporary, as the user gave it */
    int bare = strchr(out->path, '/') == NULL;
    size_t blen = strlen(base);
    int fits = 1 + blen + strlen(".tmp.XXXXXX") <= (size_t)name_max(dir);
    int n = fits ? snprintf(out->dir, sizeof out->dir, "%s%s.%s.tmp.XXXXXX", bare ? "" : dir,
                            bare ? "" : "/", base)
                 : snprintf(out->dir, sizeof out->dir, "%s%s" SHORT_TMP "XXXXXX", bare ? "" : dir,
                            bare ? "" : "/");
    /* the directory, then the file inside it: both within PATH_MAX */
    if (n < 0 || (size_t)n + 1 + blen >= PATH_MAX || (size_t)n >= sizeof out->dir)
        return dd_fail(err, DD_EUSAGE,
                       "output path %s is too long: the temporary file beside it would have more "
                       "than %d bytes in its path; choose a shorter --out",
                       out->path, PATH_MAX - 1);
    if (!mkdtemp(out->dir))
        return dd_fail(err, DD_EIO, "cannot create a temporary directory beside %s: %s", out->path,
                       strerror(errno));
    snprintf(out->tmp, sizeof out->tmp, "%s/%s", out->dir, base);
    char owner[4200], line[640], host[256] = "";
    gethostname(host, sizeof host - 1);
    snprintf(owner, sizeof owner, "%s/" OWNER_FILE, out->dir);
    int len = snprintf(line, sizeof line, "%s %ld\n%s\n", host, (long)getpid(), base);
    int fd = open(owner, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int ok = fd >= 0 && len > 0 && len < (int)sizeof line && write(fd, line, (size_t)len) == len;
    if (fd >= 0)
        ok = close(fd) == 0 && ok;
    if (!ok) {
        int e = errno;
        io_output_remove_temporary(out->tmp, owner, out->dir);
        return dd_fail(err, DD_EIO, "cannot write in the temporary directory beside %s: %s",
                       out->path, strerror(e));
    }
    return DD_OK;
}

/* ---- refusals before anything is computed ------------------------------------------ */

int io_output_same_file(const char *p, const char *q)
{
    struct stat s1, s2;
    if (!p || !q || stat(p, &s1) != 0 || stat(q, &s2) != 0)
        return 0;
    return s1.st_dev == s2.st_dev && s1.st_ino == s2.st_ino;
}

const char *io_output_kind_of(mode_t m)
{
    return S_ISLNK(m)    ? "a symbolic link"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

/* The final name: a regular file to replace (with force), or nothing. */
static int check_existing(const char *path, const char *input_path, int force, dd_err *err)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return DD_OK;
        return dd_fail(err, DD_EIO, "cannot check output %s: %s", path, strerror(errno));
    }
    if (io_output_same_file(path, input_path))
        return dd_fail(err, DD_EUSAGE,
                       "output %s is the input file; dgemm-dist never overwrites its input, "
                       "choose another --out",
                       path);
    if (S_ISDIR(st.st_mode))
        return dd_fail(err, DD_EUSAGE, "output %s is a directory; give a file name", path);
    if (!S_ISREG(st.st_mode))
        return dd_fail(err, DD_EUSAGE,
                       "output %s is %s; dgemm-dist replaces only regular files, choose another "
                       "--out",
                       path, io_output_kind_of(st.st_mode));
    if (!force)
        return dd_fail(err, DD_EUSAGE, "output %s exists; pass --force to replace it", path);
    return DD_OK;
}

static int prepare_local(dd_output *out, const char *input_path, dd_err *err)
{
    const char *path = out->path;
    if (path[0] == '\0')
        return dd_fail(err, DD_EUSAGE, "no output file given; pass --out FILE");
    char dir[4096];
    const char *base;
    if (io_output_split_path(path, dir, sizeof dir, &base) != 0)
        return dd_fail(err, DD_EUSAGE, "output path %s is too long", path);
    if (base[0] == '\0')
        return dd_fail(err, DD_EUSAGE, "output %s names a directory; give a file name", path);
    struct stat st;
    if (stat(dir, &st) != 0 && errno == ENAMETOOLONG)
        return dd_fail(err, DD_EUSAGE,
                       "output directory %s has a name longer than the file system allows; "
                       "choose a shorter --out",
                       dir);
    if (stat(dir, &st) != 0)
        return dd_fail(err, DD_EUSAGE, "output directory %s does not exist; create it first", dir);
    if (!S_ISDIR(st.st_mode))
        return dd_fail(err, DD_EUSAGE, "output directory %s is not a directory", dir);
    if (access(dir, W_OK | X_OK) != 0)
        return dd_fail(err, DD_EUSAGE,
                       "output directory %s is not writable; choose another place for --out", dir);
    long most = name_max(dir);
    if (strlen(base) > (size_t)most)
        return dd_fail(err, DD_EUSAGE,
                       "output name %.40s... is %zu bytes long; the file system allows at most "
                       "%ld: choose a shorter --out",
                       base, strlen(base), most);
    int rc = check_existing(path, input_path, out->force, err);
    if (rc)
        return rc;
    remove_stale(dir, base);
    return make_temporary(out, dir, base, err);
}

int io_output_prepare(MPI_Comm comm, const char *path, const char *input_path, int force,
                      dd_output *out, dd_err *err)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    memset(out, 0, sizeof *out);
    out->force = force;
    dd_err local;
    dd_err_clear(&local);
    int rc = DD_OK;
    if (!path || strlen(path) >= sizeof out->path)
        rc = dd_fail(&local, DD_EUSAGE, "output path is missing or too long");
    else
        snprintf(out->path, sizeof out->path, "%s", path);
    if (rank == 0 && rc == DD_OK)
        rc = prepare_local(out, input_path, &local);
    rc = io_bcast_verdict(comm, rc, &local, err);
    if (rc != DD_OK)
        return rc;
    if (MPI_Bcast(out->dir, (int)sizeof out->dir, MPI_CHAR, 0, comm) != MPI_SUCCESS ||
        MPI_Bcast(out->tmp, (int)sizeof out->tmp, MPI_CHAR, 0, comm) != MPI_SUCCESS) {
        if (rank == 0)
            io_output_abort(comm, out);
        return dd_fail(err, DD_EFAIL, "MPI_Bcast failed while sharing the temporary output name");
    }
    out->active = 1;
    io_output_arm_signals(out);
    return DD_OK;
}

/* ---- commit and abort ------------------------------------------------------------- */

/* The space reserved beyond the file's end (io_h5_reserve's margin for
 * HDF5's metadata) is given back; file systems keep it allocated otherwise,
 * and truncating to the same size is a no-op on some (tmpfs), so the file
 * grows by a byte and shrinks back.  The temporary is this run's alone:
 * nothing else writes there.  Where the first step fails nothing changed,
 * and only the space stays allocated; the second failing is an error, the
 * file being no longer the one verified. */
static int trim_reserve(const dd_output *out, dd_err *err)
{
    struct stat st;
    int fd = open(out->tmp, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return DD_OK;
    int rc = DD_OK;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(fd, st.st_size + 1) == 0 &&
        ftruncate(fd, st.st_size) != 0)
        rc = dd_fail(err, DD_EIO, "cannot truncate %s back to its size: %s", out->tmp,
                     strerror(errno));
    close(fd);
    return rc;
}

/* --sync: the file's data and metadata on disk before it takes its name
 * (fsync of any descriptor flushes what every rank of this host wrote). */
static int sync_file(const dd_output *out, dd_err *err)
{
    int fd = open(out->tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return dd_fail(err, DD_EIO, "cannot open %s to flush it to disk: %s", out->tmp,
                       strerror(errno));
    int rc = DD_OK;
    /* DD_FAULT=sync-file: tests take the path of a flush that fails */
    if ((dd_fault("sync-file") ? (errno = EIO, -1) : fsync(fd)) != 0)
        rc = dd_fail(err, DD_EIO,
                     "cannot flush C to disk (fsync of %s): %s%s; nothing was committed, %s is "
                     "as it was",
                     out->tmp, strerror(errno), errno == ENOSPC ? " (the disk is full)" : "",
                     out->path);
    close(fd);
    return rc;
}

/* --sync: the output's directory entry on disk, after the rename or link
 * (and after the private directory is gone, so a crash leaves neither). */
static int sync_dir(const dd_output *out, dd_err *err)
{
    char dir[4096];
    const char *base;
    if (io_output_split_path(out->path, dir, sizeof dir, &base) != 0)
        return dd_fail(err, DD_EIO, "output path %s is too long", out->path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = DD_OK;
    if (fd < 0 || fsync(fd) != 0)
        rc = dd_fail(err, DD_EIO,
                     "%s is written, but its directory %s could not be flushed to disk (%s): "
                     "the new name may not survive a crash",
                     out->path, dir, strerror(errno));
    if (fd >= 0)
        close(fd);
    return rc;
}

/* Rank 0: the temporary takes the final name.  Without force it must not
 * replace a file that appeared during the run: link() fails on an existing
 * name, atomically; where the file system has no hard links, a last check
 * and rename. */
static int commit_local(dd_output *out, dd_err *err)
{
    struct stat st;
    int rc = trim_reserve(out, err);
    if (rc == DD_OK && out->sync)
        rc = sync_file(out, err);
    if (rc != DD_OK)
        return rc;
    if (!out->force) {
        if (link(out->tmp, out->path) == 0) {
            unlink(out->tmp); /* the output keeps the data: one name less */
            return DD_OK;
        }
        if (errno == EEXIST)
            return dd_fail(err, DD_EIO,
                           "output %s was created by something else during this run; it was not "
                           "replaced (pass --force to replace it)",
                           out->path);
        if (lstat(out->path, &st) == 0)
            return dd_fail(err, DD_EIO,
                           "output %s was created by something else during this run; it was not "
                           "replaced (pass --force to replace it)",
                           out->path);
    } else if (lstat(out->path, &st) == 0 && !S_ISREG(st.st_mode)) {
        return dd_fail(err, DD_EIO,
                       "output %s became %s during this run; dgemm-dist replaces only regular "
                       "files",
                       out->path, io_output_kind_of(st.st_mode));
    }
    if (rename(out->tmp, out->path) != 0)
        return dd_fail(err, DD_EIO, "cannot rename %s to %s: %s", out->tmp, out->path,
                       strerror(errno));
    return DD_OK;
}

int io_output_commit(MPI_Comm comm, dd_output *out, dd_err *err)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    dd_err local;
    dd_err_clear(&local);
    int rc = DD_OK;
    if (rank == 0)
        rc = out->active ? commit_local(out, &local)
                         : dd_fail(&local, DD_EFAIL, "no temporary output to commit");
    if (rank == 0 && rc == DD_OK) { /* the now empty private directory */
        char owner[4200];
        snprintf(owner, sizeof owner, "%s/" OWNER_FILE, out->dir);
        unlink(owner);
        rmdir(out->dir);
        if (out->sync)
            rc = sync_dir(out, &local);
    }
    rc = io_bcast_verdict(comm, rc, &local, err);
    if (rc == DD_OK) {
        out->active = 0;
        io_output_disarm_signals();
    }
    return rc;
}

/* No communication: it runs on error paths, where a collective could hang. */
void io_output_abort(MPI_Comm comm, dd_output *out)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0 && out && out->dir[0]) {
        char owner[4200];
        snprintf(owner, sizeof owner, "%s/" OWNER_FILE, out->dir);
        io_output_remove_temporary(out->tmp, owner, out->dir);
    }
    if (out)
        out->active = 0;
    io_output_disarm_signals();
}
