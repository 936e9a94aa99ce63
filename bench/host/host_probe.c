/* host-probe — what moving a caller's pageable host arrays to and from one
 * GPU costs, by each way the library could move them (a benchmark, not a
 * test): host copies between pageable and pinned memory on 1..T threads,
 * cudaHostRegister / cudaHostUnregister of the array itself, and the copy
 * engines' rates from registered, pinned and pageable memory.  One JSON
 * record per measurement on stdout, a table on stderr.
 *   host-probe [--mib N (default 2048)] [--threads 1,2,4,8,16] [--reps 3]
 * The array is touched first (as a caller's data is); medians of reps. */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "host-probe: %s: %s\n", #x, cudaGetErrorString(e_));                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmpd);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct {
    char *dst;
    const char *src;
    size_t bytes;
} job;

static void *run_copy(void *arg)
{
    job *j = arg;
    memcpy(j->dst, j->src, j->bytes);
    return NULL;
}

/* bytes from src to dst in chunk-sized pieces (the pipeline's slots), each
 * piece cut over t threads */
static void copy_threads(char *dst, const char *src, size_t bytes, size_t chunk, int t)
{
    pthread_t th[64];
    job jb[64];
    for (size_t off = 0; off < bytes; off += chunk) {
        size_t n = bytes - off < chunk ? bytes - off : chunk, per = (n + (size_t)t - 1) / (size_t)t;
        int used = 0;
        for (int i = 0; i < t; i++) {
            size_t lo = (size_t)i * per;
            if (lo >= n)
                break;
            jb[i] = (job){dst + lo, src + off + lo, (lo + per > n ? n - lo : per)};
            if (i > 0 && pthread_create(&th[i], NULL, run_copy, &jb[i]) != 0) {
                fprintf(stderr, "host-probe: pthread_create failed\n");
                exit(1);
            }
            used++;
        }
        run_copy(&jb[0]);
        for (int i = 1; i < used; i++)
            pthread_join(th[i], NULL);
    }
}

static void record(const char *what, int threads, double bytes, double sec)
{
    printf("{\"bench\":\"host-probe\",\"what\":\"%s\",\"threads\":%d,\"bytes\":%.0f,\"seconds\":%.6f,"
           "\"GBps\":%.2f}\n",
           what, threads, bytes, sec, bytes / sec / 1e9);
    fprintf(stderr, "%-34s threads %2d  %8.4f s  %7.2f GB/s\n", what, threads, sec, bytes / sec / 1e9);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    size_t mib = 2048;
    int reps = 3, tl[16] = {1, 2, 4, 8, 16}, nt = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mib") && i + 1 < argc)
            mib = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            nt = 0;
            for (char *s = strtok(argv[++i], ","); s && nt < 16; s = strtok(NULL, ","))
                tl[nt++] = atoi(s);
        } else {
            fprintf(stderr, "usage: host-probe [--mib N] [--threads 1,2,4] [--reps R]\n");
            return 2;
        }
    }
    if (mib < 1 || reps < 1 || reps > 64) {
        fprintf(stderr, "host-probe: --mib >= 1, --reps 1..64\n");
        return 2;
    }
    size_t bytes = mib << 20, slot = (size_t)256 << 20;
    double t[64];
    char *pg = malloc(bytes), *pg2 = malloc(bytes), *pin, *dev;
    if (!pg || !pg2) {
        fprintf(stderr, "host-probe: out of host memory for %zu MiB\n", 2 * mib);
        return 1;
    }
    for (size_t i = 0; i < bytes; i += 8)
        *(double *)(void *)(pg + i) = (double)i, *(double *)(void *)(pg2 + i) = 0;
    CK(cudaMallocHost((void **)&pin, slot));
    CK(cudaMalloc((void **)&dev, bytes));
    memset(pin, 0, slot);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    for (int k = 0; k < nt; k++) {
        int th = tl[k] < 1 ? 1 : tl[k] > 64 ? 64 : tl[k];
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            copy_threads(pin, pg, bytes, slot, th);
            t[r] = now() - t0;
        }
        record("memcpy pageable->pinned (256 MiB)", th, (double)bytes, median(t, reps));
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            for (size_t off = 0; off < bytes; off += slot) /* pinned slot -> each range */
                copy_threads(pg2 + off, pin, bytes - off < slot ? bytes - off : slot, slot, th);
            t[r] = now() - t0;
        }
        record("memcpy pinned->pageable (256 MiB)", th, (double)bytes, median(t, reps));
    }
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        for (size_t off = 0; off < bytes; off += slot)
            CK(cudaMemcpyAsync(dev + off, pin, bytes - off < slot ? bytes - off : slot,
                               cudaMemcpyHostToDevice, s));
        CK(cudaStreamSynchronize(s));
        t[r] = now() - t0;
    }
    record("H2D from pinned", 0, (double)bytes, median(t, reps));
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        CK(cudaMemcpyAsync(dev, pg, bytes, cudaMemcpyHostToDevice, s));
        CK(cudaStreamSynchronize(s));
        t[r] = now() - t0;
    }
    record("H2D from pageable (driver staging)", 0, (double)bytes, median(t, reps));
    double treg[64], tunreg[64], th2d[64], td2h[64], treg2[64];
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        CK(cudaHostRegister(pg, bytes, cudaHostRegisterDefault));
        treg[r] = now() - t0;
        t0 = now();
        CK(cudaMemcpyAsync(dev, pg, bytes, cudaMemcpyHostToDevice, s));
        CK(cudaStreamSynchronize(s));
        th2d[r] = now() - t0;
        t0 = now();
        CK(cudaHostRegister(pg2, bytes, cudaHostRegisterDefault));
        treg2[r] = now() - t0;
        t0 = now();
        CK(cudaMemcpyAsync(pg2, dev, bytes, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        td2h[r] = now() - t0;
        t0 = now();
        CK(cudaHostUnregister(pg));
        CK(cudaHostUnregister(pg2));
        tunreg[r] = (now() - t0) / 2;
    }
    record("cudaHostRegister (touched)", 0, (double)bytes, median(treg, reps));
    record("cudaHostRegister (2nd array)", 0, (double)bytes, median(treg2, reps));
    record("H2D from registered", 0, (double)bytes, median(th2d, reps));
    record("D2H to registered", 0, (double)bytes, median(td2h, reps));
    record("cudaHostUnregister", 0, (double)bytes, median(tunreg, reps));
    /* registering in pieces on a thread while the copy engine takes the
     * registered ones: what a pipeline could overlap */
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        for (size_t off = 0; off < bytes; off += slot) {
            size_t n = bytes - off < slot ? bytes - off : slot;
            CK(cudaHostRegister(pg + off, n, cudaHostRegisterDefault));
            CK(cudaMemcpyAsync(dev + off, pg + off, n, cudaMemcpyHostToDevice, s));
        }
        CK(cudaStreamSynchronize(s));
        t[r] = now() - t0;
        for (size_t off = 0; off < bytes; off += slot)
            CK(cudaHostUnregister(pg + off));
    }
    record("register 256 MiB pieces + H2D each", 0, (double)bytes, median(t, reps));
    CK(cudaFree(dev));
    CK(cudaFreeHost(pin));
    free(pg);
    free(pg2);
    return 0;
}
