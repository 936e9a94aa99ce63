#!/usr/bin/env bash
# shellcheck disable=SC2015  # `test && test || problem` records a problem when either fails
# Interrupts the way users and batch systems send them, mid-write
# (io/io_output_signals.c, docs/design.md "The output discipline"): the run ends,
# no temporary is left behind, the old output is kept.
#  - SIGTERM through timeout(1) (one to mpirun, one to its process group),
#    SIGTERM twice and Ctrl-C twice: where mpirun sees two signals it exits
#    at once, and its ranks get no signal at all (Open MPI ends them with
#    _exit about a second later).  Every rank watches its
#    launcher while the temporary exists and removes it when the launcher
#    is gone.  DD_FAULT=slow-write:0 keeps rank 0 inside the write.
#  - A long write(2) to a regular file does not run signal handlers until
#    it returns, and mpirun sends SIGKILL a second after SIGTERM: writes go
#    in pieces of at most 64 MiB (IO_PIECE_BYTES).  A preloaded shim
#    (compiled here) records the largest write of every rank, and, for the
#    slow-disk cases, makes each write last as long as it would at 128 MiB/s
#    with SIGTERM, SIGINT and SIGHUP handlers held back until it returns,
#    as the kernel does.
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$dir/common.sh"
cd "$work" || exit 1
set -m # background jobs of a script ignore SIGINT unless job control is on

"${mpirun[@]}" -n 1 "$DD_BIN" gen --out in.h5 -m 20 -n 18 -k 22 --quiet || exit 1
"${mpirun[@]}" -n 2 "$DD_BIN" --in in.h5 --out c.h5 --quiet || exit 1
old=$(sum c.h5)

# the processes started with DD_CASE=TAG in their environment, zombies aside
procs_of() {
    local p
    for p in /proc/[0-9]*; do
        grep -qzxF "DD_CASE=$1" "$p/environ" 2>/dev/null || continue
        grep -q '^State:[[:space:]]*Z' "$p/status" 2>/dev/null && continue
        echo "${p#/proc/}"
    done
}

# interrupt NAME HOW RANKS ARGS...: dgemm-dist ARGS under mpirun (with
# the options in mpi_extra; under timeout(1) for HOW=timeout) in the
# background; once rank 0 is inside the write (the command in `ready`
# succeeds), HOW: timeout (SIGTERM to timeout, which passes it to mpirun
# and to its process group), int2 (SIGINT to mpirun twice, 0.2 s apart) or
# term (SIGTERM to mpirun once) or term2 (twice, 0.2 s apart: what
# timeout(1) does when its two signals do not arrive as one).  Then every process of the case must be
# gone within 10 s, with no temporary left and the old output kept.
case_no=0
mpi_extra=()
interrupt() {
    local how=$2 n=$3 bg t0 i tag left
    local -a pre=()
    begin "$1"
    shift 3
    case_no=$((case_no + 1))
    tag="$work/case.$case_no"
    [ "$how" = timeout ] && pre=(timeout 600)
    DD_CASE="$tag" "${pre[@]}" "${mpirun[@]}" -n "$n" "${mpi_extra[@]}" "$DD_BIN" "$@" \
        >"$work/stdout" 2>"$work/stderr" &
    bg=$!
    for i in $(seq 300); do
        eval "$ready" && break
        kill -0 "$bg" 2>/dev/null || break
        sleep 0.1
    done
    eval "$ready" || problem "the write did not start within 30 s"
    sleep 0.3
    t0=$(now_ms)
    case $how in
    timeout) kill -TERM "$bg" ;;
    int2) kill -INT "$bg" && sleep 0.2 && kill -INT "$bg" ;;
    term2) kill -TERM "$bg" && sleep 0.2 && kill -TERM "$bg" ;;
    term) kill -TERM "$bg" ;;
    esac
    for i in $(seq 100); do
        [ -z "$(procs_of "$tag")" ] && break
        sleep 0.1
    done
    ms=$(($(now_ms) - t0))
    left=$(procs_of "$tag")
    if [ -n "$left" ]; then
        problem "still running 10 s after the signal: $left"
        # shellcheck disable=SC2086
        kill -KILL $left 2>/dev/null
    fi
    wait "$bg"
    rc=$?
    [ "$rc" -ne 0 ] || problem "the interrupted run exited 0"
    [ "$(sum c.h5)" = "$old" ] || problem "the old output changed"
    no_temporaries .
    end
    rm -rf .c.h5.tmp.* # a failed case must not fail the next one
}

# ---- mpirun gone at once: the ranks get no signal ----------------------------------
# rank 0 sleeps 30 s inside the write, its temporary file there
ready="compgen -G '.c.h5.tmp.*/c.h5' >/dev/null"
export DD_FAULT=slow-write:0
for try in 1 2 3; do
    interrupt "sigterm_through_timeout_mid_write_2ranks_try${try}" timeout 2 \
        --in in.h5 --out c.h5 --force --quiet
done
for try in 1 2; do
    interrupt "sigint_twice_to_mpirun_mid_write_2ranks_try${try}" int2 2 \
        --in in.h5 --out c.h5 --force --quiet
    interrupt "sigterm_twice_to_mpirun_mid_write_2ranks_try${try}" term2 2 \
        --in in.h5 --out c.h5 --force --quiet
done
unset DD_FAULT

# ---- long writes: the shim -----------------------------------------------------------
shim="$work/shim.so"
if ! "${CC:-cc}" -shared -fPIC -O2 -o "$shim" -x c - -ldl 2>"$work/cc.log" <<'EOF'; then
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* DD_SHIM_DIR/<pid>: this process's largest write to a regular file;
 * DD_SHIM_DIR/writing: made when a write of more than 1 MiB starts;
 * DD_SHIM_RATE (bytes/s): each write to a regular file lasts as long as
 * at that rate, TERM/INT/HUP handlers held until the last one returns. */
static void (*user[65])(int);
static volatile sig_atomic_t pending;
static int in_write;
static size_t most;

static void held(int sig)
{
    if (__atomic_load_n(&in_write, __ATOMIC_SEQ_CST) > 0) {
        pending = sig;
        return;
    }
    if (user[sig])
        user[sig](sig);
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    static int (*real)(int, const struct sigaction *, struct sigaction *);
    if (!real)
        real = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(RTLD_NEXT, "sigaction");
    if (getenv("DD_SHIM_RATE") && act && (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) &&
        !(act->sa_flags & SA_SIGINFO) && act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN) {
        struct sigaction a = *act;
        user[sig] = act->sa_handler;
        a.sa_handler = held;
        return real(sig, &a, old);
    }
    return real(sig, act, old);
}

static void note(const char *name, const char *text)
{
    const char *dir = getenv("DD_SHIM_DIR");
    char path[4096];
    if (!dir || snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return;
    syscall(SYS_write, fd, text, strlen(text));
    syscall(SYS_close, fd);
}

static int regular(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

static void begin(size_t n)
{
    __atomic_add_fetch(&in_write, 1, __ATOMIC_SEQ_CST);
    if (n > most) {
        char b[32], pid[32];
        most = n;
        snprintf(b, sizeof b, "%zu\n", n);
        snprintf(pid, sizeof pid, "%ld", (long)getpid());
        note(pid, b);
    }
    if (n > (1 << 20))
        note("writing", "");
}

static void finish(size_t n)
{
    const char *r = getenv("DD_SHIM_RATE");
    double rate = r ? atof(r) : 0;
    if (rate > 0) {
        double s = (double)n / rate;
        struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
        while (nanosleep(&t, &t) != 0 && errno == EINTR)
            ;
    }
    if (__atomic_sub_fetch(&in_write, 1, __ATOMIC_SEQ_CST) == 0 && pending) {
        int sig = pending;
        pending = 0;
        if (user[sig])
            user[sig](sig);
    }
}

#define WRAP(name, params, args, count)                                                            \
    ssize_t name params                                                                            \
    {                                                                                              \
        static ssize_t(*real) params;                                                              \
        if (!real)                                                                                 \
            real = (ssize_t(*) params)dlsym(RTLD_NEXT, #name);                                     \
        int reg = regular(fd);                                                                     \
        size_t n = count;                                                                          \
        if (reg)                                                                                   \
            begin(n);                                                                              \
        ssize_t k = real args;                                                                     \
        int e = errno;                                                                             \
        if (reg)                                                                                   \
            finish(n);                                                                             \
        errno = e;                                                                                 \
        return k;                                                                                  \
    }

static size_t iov_bytes(const struct iovec *v, int n)
{
    size_t s = 0;
    for (int i = 0; i < n; i++)
        s += v[i].iov_len;
    return s;
}

WRAP(write, (int fd, const void *b, size_t len), (fd, b, len), len)
WRAP(pwrite, (int fd, const void *b, size_t len, off_t off), (fd, b, len, off), len)
WRAP(pwrite64, (int fd, const void *b, size_t len, off_t off), (fd, b, len, off), len)
WRAP(writev, (int fd, const struct iovec *v, int c), (fd, v, c), iov_bytes(v, c))
WRAP(pwritev, (int fd, const struct iovec *v, int c, off_t off), (fd, v, c, off), iov_bytes(v, c))
WRAP(pwritev64, (int fd, const struct iovec *v, int c, off_t off), (fd, v, c, off),
     iov_bytes(v, c))
EOF
    echo "note: no C compiler to build the write shim ($(head -1 "$work/cc.log")): its cases are skipped"
    finish
fi
free_mib=$(($(df -k --output=avail . | tail -1) / 1024))
if [ "$free_mib" -lt 1500 ]; then
    echo "note: $free_mib MiB free in $work, the long-write cases need 1500: skipped"
    finish
fi
shimlog="$work/shim"
mkdir -p "$shimlog"
export DD_SHIM_DIR="$shimlog"
# in a sanitized tree (tests/sanitize) the shim comes before AddressSanitizer's runtime
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
paths=(direct independent)
have_collective && paths+=(collective)

# the largest single write of any rank, in bytes
largest() { cat "$shimlog"/[0-9]* 2>/dev/null | sort -n | tail -1; }
piece=$((64 << 20))

# blocks of 144 MB a rank (a 2x1 grid: whole rows), written in pieces
# (the shim is preloaded into mpirun and the ranks' shells too: their
# writes are small)
for io in "${paths[@]}"; do
    begin "writes_in_pieces_2ranks_${io}"
    rm -f "$shimlog"/* p.h5
    LD_PRELOAD="$shim" run 2 60 --size 6000,6000,1 --grid 2x1 --out p.h5 --io "$io" --quiet
    expect_rc 0 ''
    big=$(largest)
    [ -n "$big" ] || problem "the shim saw no write"
    [ "${big:-0}" -le "$piece" ] || problem "a single write of $big bytes (more than $piece)"
    rm -f p.h5
    no_temporaries .
    end
done
begin gen_writes_in_pieces_2ranks
rm -f "$shimlog"/* g.h5
LD_PRELOAD="$shim" run 2 60 gen --out g.h5 -m 6000 -n 10 -k 6000 --quiet
expect_rc 0 ''
big=$(largest)
[ -n "$big" ] || problem "the shim saw no write"
[ "${big:-0}" -le "$piece" ] || problem "a single write of $big bytes (more than $piece)"
rm -f g.h5
no_temporaries .
end

# a slow disk: C of 8192x8192 f64 (512 MiB) on one rank takes 4 s to write
# at 128 MiB/s; the signal comes inside it
ready="[ -e '$shimlog/writing' ]"
export DD_SHIM_RATE=$((128 << 20))
mpi_extra=(-x LD_PRELOAD="$shim" -x DD_SHIM_DIR -x DD_SHIM_RATE) # the ranks only
for io in "${paths[@]}"; do
    rm -f "$shimlog"/*
    interrupt "sigterm_to_mpirun_mid_long_write_1rank_${io}" term 1 \
        --size 8192,8192,1 --out c.h5 --force --io "$io" --quiet
done
rm -f "$shimlog"/*
interrupt sigterm_through_timeout_mid_long_write_1rank timeout 1 \
    --size 8192,8192,1 --out c.h5 --force --quiet
unset DD_SHIM_RATE
mpi_extra=()

finish
