/* io_output.c — the output-file discipline (io.h).
 *
 * What it guarantees: the output appears under its name only complete and
 * verified, by one rename (or link) at the end; an existing output is
 * replaced only with --force and only when it is a regular file; nothing is
 * ever written through a name an attacker could have planted, because the
 * HDF5 file is written inside a directory this run created with mkdtemp
 * (mode 0700, fresh, so nobody else can put a link there); a signal a batch
 * system sends (TERM, INT, HUP) removes the temporary before the process
 * dies (writes go in pieces, io_write_pieces, so a handler never waits
 * long), so does a rank whose launcher died without signalling it, and the
 * next run removes the temporaries of its output whose owner on this host
 * is gone.  Also here: the room checks made before the read (file-size
 * limit, the record's space) and the name checks of side files.
 *
 * Rank 0 does the file-system work and broadcasts its verdict, so every rank
 * returns the same rc and message and no two ranks race on the file system. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* mkdtemp, dirfd under strict C11 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "agree.h"
#include "dd_fault.h"
#include "dd_launch.h"
#include "io.h"
#include "io_h5.h"

#define OWNER_FILE "owner"

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

/* ---- the temporary, and what a signal removes ------------------------------------ */

/* Paths the signal handler removes; written before it is armed. */
static char sig_file[4200], sig_owner[4200], sig_dir[4100];
static volatile sig_atomic_t sig_armed;

static void remove_temporary(const char *file, const char *owner, const char *dir)
{
    unlink(file);
    unlink(owner);
    rmdir(dir);
}

/* Async-signal-safe: unlink, rmdir, signal, raise. */
static void on_signal(int sig)
{
    if (sig_armed)
        remove_temporary(sig_file, sig_owner, sig_dir);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void start_watch(void);

static void arm_signals(const dd_output *out)
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
            remove_temporary(sig_file, sig_owner, sig_dir);
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

static void disarm_signals(void)
{
    sig_armed = 0;
    stop_watch();
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
        remove_temporary(out->tmp, owner, out->dir);
        return dd_fail(err, DD_EIO, "cannot write in the temporary directory beside %s: %s",
                       out->path, strerror(e));
    }
    return DD_OK;
}

/* ---- refusals before anything is computed ------------------------------------------ */

static int same_file(const char *p, const char *q)
{
    struct stat s1, s2;
    if (!p || !q || stat(p, &s1) != 0 || stat(q, &s2) != 0)
        return 0;
    return s1.st_dev == s2.st_dev && s1.st_ino == s2.st_ino;
}

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
        if (split_path(cur, dir, sizeof dir, &base) != 0)
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
    if (!strcmp(p, q) || same_file(p, q))
        return 1;
    return resolve_name(p, rp, sizeof rp) == 0 && resolve_name(q, rq, sizeof rq) == 0 &&
           !strcmp(rp, rq);
}

static const char *kind_of(mode_t m)
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
    if (same_file(path, input_path))
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
                       path, kind_of(st.st_mode));
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
    if (split_path(path, dir, sizeof dir, &base) != 0)
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
    arm_signals(out);
    return DD_OK;
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
            snprintf(why, len, "it is %s, not a regular file", kind_of(st.st_mode));
            return why;
        }
        if (access(side, W_OK) != 0) {
            snprintf(why, len, "%s", strerror(errno));
            return why;
        }
        return NULL;
    }
    if (errno != ENOENT || split_path(side, dir, sizeof dir, &base) != 0 || !base[0] ||
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
        int fs = split_path(side, dir, sizeof dir, &base) == 0 && statvfs(dir, &vs) == 0;
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
    if (split_path(out->path, dir, sizeof dir, &base) != 0)
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
                       out->path, kind_of(st.st_mode));
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
        disarm_signals();
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
        remove_temporary(out->tmp, owner, out->dir);
    }
    if (out)
        out->active = 0;
    disarm_signals();
}
