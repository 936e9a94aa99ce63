/* io_bench.c — block I/O bandwidth: the "direct" path, the "independent"
 * path, and a dd-like sequential pwrite/pread of the same bytes.
 *
 *   mpirun -np R io-bench [--gib G] [--dir DIRECTORY] [--layout rows|grid] [--reps N]
 *
 * One f64 dataset of G gibibytes (default 1; 8192 columns, 64 KiB rows) is
 * written and read back by every rank's block (cut by rows, or on the most
 * nearly square grid), N times each (default 3); the best time is shown, from
 * the first barrier to the last rank's close, open and create included.  The
 * dd-like side is one thread per rank moving its block's bytes as one run
 * with 4 MiB pwrite/pread calls into a plain file (`dd bs=4M` at one rank).
 * Every read is compared with what was written.  The files live in
 * DIRECTORY (default $TMPDIR or /tmp); right after a write they are in the
 * page cache, so reads measure the cache unless the file system bypasses it.
 * DD_IO_THREADS sets the direct path's threads per rank (the knob of
 * src/base/dd_knobs.h, which the direct path reads).
 *
 * --writers 1,2,4: the write alone, as dgemm-dist writes C (the direct
 * path, io_write_pieces, a fresh file each time), with T threads per rank
 * (DD_IO_THREADS=T), against a plain parallel pwrite of the same bytes into
 * a plain file with the same T threads per rank (each a contiguous share of
 * its rank's run, 8 MiB calls), once into a fresh file and once into one
 * whose space rank 0 reserved first (fallocate, as the direct path does),
 * all three alternated in every repetition; --sync adds
 * what --sync costs dgemm-dist (each rank's fdatasync, then rank 0's fsync
 * of the file and of its directory) to both.  Medians of --reps; --json
 * FILE appends one record per thread count.  bench/io/write_bench.sh runs
 * it beside dd (page cache, oflag=direct, conv=fdatasync). */
#define _GNU_SOURCE /* fallocate */

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_opts.h"
#include "dd_json.h"
#include "dd_knobs.h"
#include "io.h"

enum { COLS = 8192 };
#define DD_CHUNK ((size_t)4 << 20)

static int g_rank, g_size;

static void split(int64_t n, int parts, int i, int64_t *start, int64_t *len)
{
    int64_t base = n / parts, rem = n % parts;
    *start = i * base + (i < rem ? i : rem);
    *len = base + (i < rem ? 1 : 0);
}

/* The dd-like side: this rank's block as one run at `at` (the ranks' blocks
 * one after the other, rank by rank), in 4 MiB calls. */
static int dd_like(const char *file, int writing, char *buf, size_t bytes, off_t at)
{
    if (writing && g_rank == 0) {
        int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || close(fd) != 0)
            return -1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int fd = open(file, writing ? O_WRONLY : O_RDONLY);
    if (fd < 0)
        return -1;
    for (size_t done = 0; done < bytes;) {
        size_t n = bytes - done < DD_CHUNK ? bytes - done : DD_CHUNK;
        ssize_t k = writing ? pwrite(fd, buf + done, n, at + (off_t)done)
                            : pread(fd, buf + done, n, at + (off_t)done);
        if (k <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)k;
    }
    return close(fd);
}

/* One write or read of the whole dataset through `p` (NULL: dd-like); seconds, or -1. */
static double one_pass(const dd_io_ops *p, const char *file, int writing, const int64_t dims[2],
                       const int64_t b[4], off_t at, char *buf)
{
    const char *names[1] = {"C"};
    size_t bytes = (size_t)(b[1] * b[3]) * 8;
    dd_io io = {0};
    dd_err e;
    dd_err_clear(&e);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int rc = DD_OK;
    if (p == NULL) {
        rc = dd_like(file, writing, buf, bytes, at) == 0 ? DD_OK : DD_EIO;
        if (rc != DD_OK)
            dd_fail(&e, rc, "dd-like %s of %s failed", writing ? "write" : "read", file);
    } else if (writing) {
        rc = p->create(&io, MPI_COMM_WORLD, file, 1, names, (const int64_t(*)[2])dims, DD_F64, &e);
        if (rc == DD_OK)
            rc = p->write_block(&io, "C", DD_F64, b[0], b[1], b[2], b[3], buf, &e);
    } else {
        rc = p->open_read(&io, MPI_COMM_WORLD, file, &e);
        if (rc == DD_OK)
            rc = p->read_block(&io, "C", DD_F64, b[0], b[1], b[2], b[3], buf, &e);
    }
    if (p != NULL && io.impl != NULL && p->close(&io, &e) != DD_OK)
        rc = DD_EIO;
    int all = 0;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    if (rc != DD_OK)
        fprintf(stderr, "io-bench: rank %d: %s\n", g_rank, e.msg);
    return all == DD_OK ? t : -1;
}

/* Writes then reads `reps` times through `p`; best[1], best[0]: the best
 * write and read times (-1: none).  Returns the passes that failed. */
static int best_of(const dd_io_ops *p, const char *file, int reps, const int64_t dims[2],
                   const int64_t b[4], off_t at, double *data, double *back, size_t n,
                   double best[2])
{
    int fails = 0;
    best[0] = best[1] = -1;
    for (int r = 0; r < reps; r++)
        for (int w = 1; w >= 0; w--) {
            memset(back, 0, n * 8);
            double t = one_pass(p, file, w, dims, b, at, w ? (char *)data : (char *)back);
            int bad = !w && t >= 0 && memcmp(back, data, n * 8) != 0, anybad = 0;
            MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            fails += anybad || t < 0;
            if (t >= 0 && !anybad && (best[w] < 0 || t < best[w]))
                best[w] = t;
        }
    if (g_rank == 0)
        unlink(file);
    MPI_Barrier(MPI_COMM_WORLD);
    return fails;
}

/* ---- --writers: the write alone ------------------------------------------------------- */

#define WRITE_CALL ((size_t)8 << 20) /* the plain writer's pwrite size */
enum { MAX_WRITERS = 64 };

typedef struct {
    int fd;
    const char *buf;
    size_t n;
    off_t at;
    int err;
} wshare;

static void *wshare_run(void *arg)
{
    wshare *s = arg;
    for (size_t done = 0; done < s->n;) {
        size_t len = s->n - done < WRITE_CALL ? s->n - done : WRITE_CALL;
        ssize_t k = pwrite(s->fd, s->buf + done, len, s->at + (off_t)done);
        if (k <= 0) {
            s->err = 1;
            break;
        }
        done += (size_t)k;
    }
    return NULL;
}

/* Rank 0: what --sync adds after every rank has closed: fsync of the file
 * and of its directory. */
static int sync_file_and_dir(const char *file, const char *dir)
{
    int fd = open(file, O_RDONLY), dfd = open(dir, O_RDONLY);
    int rc = fd < 0 || dfd < 0 || fsync(fd) != 0 || fsync(dfd) != 0 ? -1 : 0;
    if (fd >= 0)
        close(fd);
    if (dfd >= 0)
        close(dfd);
    return rc;
}

/* The baseline: this rank's run of bytes at `at`, T threads, each a contiguous share. */
static int plain_write(const char *file, int threads, const char *buf, size_t bytes, off_t at,
                       int sync, off_t reserve)
{
    if (g_rank == 0) {
        int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || (reserve > 0 && fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, reserve) != 0) ||
            close(fd) != 0)
            return -1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int fd = open(file, O_WRONLY);
    if (fd < 0)
        return -1;
    wshare s[MAX_WRITERS];
    pthread_t tid[MAX_WRITERS];
    int started[MAX_WRITERS], bad = 0;
    for (int k = 0; k < threads; k++) {
        size_t b0 = bytes * (size_t)k / (size_t)threads, b1 = bytes * (size_t)(k + 1) / (size_t)threads;
        s[k] = (wshare){fd, buf + b0, b1 - b0, at + (off_t)b0, 0};
        started[k] = k > 0 && pthread_create(&tid[k], NULL, wshare_run, &s[k]) == 0;
    }
    for (int k = 0; k < threads; k++)
        if (!started[k])
            wshare_run(&s[k]);
    for (int k = 0; k < threads; k++) {
        if (started[k])
            pthread_join(tid[k], NULL);
        bad |= s[k].err;
    }
    if (sync && fdatasync(fd) != 0)
        bad = 1;
    return close(fd) != 0 || bad ? -1 : 0;
}

/* One write of the whole dataset, T threads: direct (kind 0), plain into a
 * fresh file (1) or into a reserved one (2); seconds or -1. */
static double write_pass(int kind, int threads, int sync, const char *file, const char *dir,
                         const int64_t dims[2], const int64_t b[4], off_t at, const char *buf)
{
    const char *names[1] = {"C"};
    size_t bytes = (size_t)(b[1] * b[3]) * 8;
    char t[16];
    snprintf(t, sizeof t, "%d", threads);
    setenv("DD_IO_THREADS", t, 1);
    dd_err e;
    dd_err_clear(&e);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int rc = DD_OK;
    if (kind >= 1) {
        off_t all_bytes = (off_t)(dims[0] * dims[1] * 8);
        rc = plain_write(file, threads, buf, bytes, at, sync, kind == 2 ? all_bytes : 0) == 0
                 ? DD_OK
                 : DD_EIO;
        if (rc != DD_OK)
            dd_fail(&e, rc, "plain write of %s failed", file);
    } else {
        dd_io io = {0};
        io.durable = sync;
        rc = dd_io_direct.create(&io, MPI_COMM_WORLD, file, 1, names, (const int64_t(*)[2])dims,
                                 DD_F64, &e);
        if (rc == DD_OK) {
            rc = io_write_pieces(&io, "C", DD_F64, b[0], b[1], b[2], b[3], buf, &e);
            rc = io_close_after(&io, rc, &e);
        }
    }
    int all = 0;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (all == DD_OK && sync && g_rank == 0 && sync_file_and_dir(file, dir) != 0)
        all = DD_EIO;
    MPI_Bcast(&all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    double sec = MPI_Wtime() - t0;
    if (rc != DD_OK)
        fprintf(stderr, "io-bench: rank %d: %s\n", g_rank, e.msg);
    if (g_rank == 0)
        unlink(file);
    MPI_Barrier(MPI_COMM_WORLD);
    return all == DD_OK ? sec : -1;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, c = *(const double *)y;
    return (a > c) - (a < c);
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The --writers table: per thread count, both writers' median GB/s. */
static int write_mode(const int *ts, int nts, int reps, int sync, const char *json,
                      const char *file, const char *dir, const int64_t dims[2], const int64_t b[4],
                      off_t at, const char *buf)
{
    double bytes = (double)dims[0] * (double)dims[1] * 8;
    double (*t)[3] = calloc((size_t)(nts * reps), sizeof *t);
    if (t == NULL)
        return 1;
    int fails = 0;
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < nts; i++)
            for (int k = 0; k < 3; k++) {
                int kind = (k + r + i) % 3; /* no writer always first */
                double s = write_pass(kind, ts[i], sync, file, dir, dims, b, at, buf);
                fails += s < 0;
                t[i * reps + r][kind] = s;
            }
    if (g_rank == 0) {
        printf("%-8s %12s %12s %16s %14s\n", "threads", "direct GB/s", "plain GB/s",
               "plain+reserve GB/s", "direct/best");
        FILE *jf = json ? fopen(json, "a") : NULL;
        if (json && !jf)
            fprintf(stderr, "io-bench: cannot append to %s\n", json);
        for (int i = 0; i < nts; i++) {
            double d[1000], p[1000], q[1000];
            int n = reps < 1000 ? reps : 1000;
            for (int r = 0; r < n; r++) {
                d[r] = t[i * reps + r][0];
                p[r] = t[i * reps + r][1];
                q[r] = t[i * reps + r][2];
            }
            double md = median_of(d, n), mp = median_of(p, n), mq = median_of(q, n);
            double best = mp < mq ? mp : mq;
            printf("%-8d %12.2f %12.2f %16.2f %14.3f\n", ts[i], bytes / md / 1e9,
                   bytes / mp / 1e9, bytes / mq / 1e9, best / md);
            if (jf) {
                fputs("{\"tool\":\"io-bench\",\"mode\":\"writers\"", jf);
                dd_json_kv_int(jf, "ranks", g_size);
                dd_json_kv_int(jf, "threads", ts[i]);
                dd_json_kv_int(jf, "bytes", (long long)bytes);
                dd_json_kv_int(jf, "sync", sync);
                dd_json_kv_int(jf, "reps", reps);
                dd_json_kv_num_g(jf, "direct_gbs", bytes / md / 1e9, 4);
                dd_json_kv_num_g(jf, "plain_gbs", bytes / mp / 1e9, 4);
                dd_json_kv_num_g(jf, "plain_reserved_gbs", bytes / mq / 1e9, 4);
                fputs(",\"direct_s\":[", jf);
                for (int r = 0; r < n; r++)
                    fprintf(jf, "%s%.4f", r ? "," : "", t[i * reps + r][0]);
                fputs("],\"plain_s\":[", jf);
                for (int r = 0; r < n; r++)
                    fprintf(jf, "%s%.4f", r ? "," : "", t[i * reps + r][1]);
                fputs("],\"plain_reserved_s\":[", jf);
                for (int r = 0; r < n; r++)
                    fprintf(jf, "%s%.4f", r ? "," : "", t[i * reps + r][2]);
                fputs("]}\n", jf);
            }
        }
        if (jf)
            fclose(jf);
    }
    free(t);
    return fails;
}

/* --writers LIST: thread counts, 1..MAX_WRITERS each, at most 8. */
static int g_ts[8], g_nts;
static const char *writers_opt(const char *v, void *dest)
{
    (void)dest;
    const char *want = "a list of thread counts, 1..64 each, at most 8";
    if (!v)
        return want;
    g_nts = 0;
    for (const char *s = v; *s;) {
        size_t len = strcspn(s, ",");
        char one[16];
        long long n;
        if (len == 0 || len >= sizeof one || g_nts == 8)
            return want;
        memcpy(one, s, len);
        one[len] = '\0';
        if (bench_int(one, 1, MAX_WRITERS, &n))
            return want;
        g_ts[g_nts++] = (int)n;
        s += len + (s[len] == ',');
    }
    return g_nts ? NULL : want;
}

static const char USAGE[] =
    "usage: mpirun -np R io-bench [--gib G] [--dir DIRECTORY] [--layout rows|grid] [--reps N]\n"
    "                             [--writers T1,T2,...] [--sync] [--json FILE]\n"
    "  G GiB of f64 (default 1) in DIRECTORY (default $TMPDIR or /tmp), blocks by rows\n"
    "  or on a grid, best of N (default 3) of each path; --writers: the write alone, the\n"
    "  direct path against a plain parallel pwrite (fresh and reserved file), T threads\n"
    "  per rank each, medians\n";

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    io_quiet();
    double gib = 1.0;
    const char *tmp = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
    const char *dir = tmp;
    int grid = 0, reps = 3, sync = 0;
    const char *json = NULL;
    /* at least one 64 KiB row; at most 1 TiB */
    const bench_opt table[] = {
        {"--gib", BENCH_DOUBLE, &gib, 0, 0, COLS * 8.0 / 1073741824.0, 1024, NULL, NULL},
        {"--dir", BENCH_STRING, &dir, 0, 0, 0, 0, NULL, NULL},
        {"--layout", BENCH_CHOICE, &grid, 0, 0, 0, 0, "rows|grid", NULL},
        {"--reps", BENCH_INT, &reps, 1, 1000, 0, 0, NULL, NULL},
        {"--writers", BENCH_CALL, NULL, 0, 0, 0, 0, NULL, writers_opt},
        {"--sync", BENCH_FLAG, &sync, 0, 0, 0, 0, NULL, NULL},
        {"--json", BENCH_STRING, &json, 0, 0, 0, 0, NULL, NULL},
        {NULL, BENCH_FLAG, NULL, 0, 0, 0, 0, NULL, NULL}};
    int prc = bench_parse("io-bench", USAGE, table, argc, argv, g_rank == 0 ? stderr : NULL);
    if (prc != BENCH_GO) {
        MPI_Finalize();
        return prc;
    }
    int64_t rows = (int64_t)(gib * 1073741824.0 / (COLS * 8.0) + 0.5);
    int P = 1;
    for (int p = 1; p * p <= g_size; p++)
        if (g_size % p == 0)
            P = p;
    int Q = grid ? g_size / P : 1;
    P = grid ? P : g_size;
    const int64_t dims[2] = {rows, COLS};
    int64_t b[4];
    split(rows, P, g_rank / Q, &b[0], &b[1]);
    split(COLS, Q, g_rank % Q, &b[2], &b[3]);
    size_t n = (size_t)(b[1] * b[3]);
    long long mine = (long long)n * 8, before = 0;
    MPI_Exscan(&mine, &before, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    off_t at = g_rank == 0 ? 0 : (off_t)before;
    double *data = malloc(n ? n * 8 : 8), *back = malloc(n ? n * 8 : 8);
    if (data == NULL || back == NULL) {
        fprintf(stderr, "io-bench: out of memory for %zu bytes\n", 2 * n * 8);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int64_t i = 0; i < b[1]; i++)
        for (int64_t j = 0; j < b[3]; j++)
            data[i * b[3] + j] = (double)((b[0] + i) * COLS + b[2] + j);

    if (g_nts) {
        char file[4096];
        snprintf(file, sizeof file, "%s/io-bench.%d.h5", dir, (int)getpid());
        MPI_Bcast(file, sizeof file, MPI_CHAR, 0, MPI_COMM_WORLD);
        if (g_rank == 0)
            printf("io-bench: write alone, %.3g GiB f64 (%lld x %d), %d ranks (%dx%d blocks), "
                   "median of %d%s; file %s\n",
                   (double)rows * COLS * 8 / 1073741824.0, (long long)rows, COLS, g_size, P, Q,
                   reps, sync ? ", --sync (fdatasync per rank, fsync of file and directory)" : "",
                   file);
        int wf = write_mode(g_ts, g_nts, reps, sync, json, file, dir, dims, b, at, (char *)data);
        if (g_rank == 0 && wf)
            printf("io-bench: %d write passes failed\n", wf);
        free(data);
        free(back);
        MPI_Finalize();
        return wf ? 1 : 0;
    }
    const dd_io_ops *paths[3] = {&dd_io_direct, &dd_io_independent, NULL};
    const char *label[3] = {"direct", "independent", "dd-like (4 MiB pwrite/pread)"};
    double bytes = (double)rows * COLS * 8;
    char file[4096];
    snprintf(file, sizeof file, "%s/io-bench.%d.h5", dir, (int)getpid());
    MPI_Bcast(file, sizeof file, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (g_rank == 0) {
        const char *th = dd_knob_str(DDK_IO_THREADS);
        printf("io-bench: %.3g GiB f64 (%lld x %d), %d ranks (%dx%d blocks), %d reps, best of; "
               "DD_IO_THREADS=%s; file %s\n",
               bytes / 1073741824.0, (long long)rows, COLS, g_size, P, Q, reps,
               th ? th : "(default)", file);
        printf("%-30s %10s %10s\n", "path", "write GB/s", "read GB/s");
    }
    int fails = 0;
    for (int k = 0; k < 3; k++) {
        double best[2];
        fails += best_of(paths[k], file, reps, dims, b, at, data, back, n, best);
        if (g_rank == 0)
            printf("%-30s %10.2f %10.2f\n", label[k], best[1] > 0 ? bytes / best[1] / 1e9 : -1,
                   best[0] > 0 ? bytes / best[0] / 1e9 : -1);
    }
    if (g_rank == 0 && fails)
        printf("io-bench: %d passes failed or read back wrong data\n", fails);
    free(data);
    free(back);
    MPI_Finalize();
    return fails ? 1 : 0;
}
