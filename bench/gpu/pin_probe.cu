// pin_probe.cu — how the host memory the pipeline's slots need can be
// pinned, and what that does to copies running beside it (a benchmark,
// not a test; docs/results/h200-2026-12-04-call-q):
//   nvcc -O2 -o pin_probe bench/gpu/pin_probe.cu && ./pin_probe [MiB]
// For each way (cudaHostAlloc; malloc, pages touched by 8 threads, then
// cudaHostRegister) it prints the time to pin MiB (default 320) alone, and
// the time a stream of 64 MiB host-to-device copies from an already pinned
// buffer (8 GiB in all) takes alone and while another thread pins.
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x)                                                                        \
    do {                                                                             \
        cudaError_t e_ = (x);                                                        \
        if (e_ != cudaSuccess) {                                                     \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,                \
                    cudaGetErrorString(e_));                                         \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static size_t bytes;
static int way;
static void *mem;
static double pin_sec;

struct touch {
    char *p;
    size_t n;
};
static void *touch_run(void *a)
{
    struct touch *t = (struct touch *)a;
    memset(t->p, 0, t->n);
    return NULL;
}

static void *pin(void *)
{
    double t0 = now();
    if (way == 0) {
        CK(cudaHostAlloc(&mem, bytes, cudaHostAllocDefault));
    } else {
        if (posix_memalign(&mem, 1 << 21, bytes))
            exit(1);
        pthread_t th[8];
        struct touch t[8];
        for (int k = 0; k < 8; k++) {
            t[k].p = (char *)mem + bytes * k / 8;
            t[k].n = bytes * (k + 1) / 8 - bytes * k / 8;
            pthread_create(&th[k], NULL, touch_run, &t[k]);
        }
        for (int k = 0; k < 8; k++)
            pthread_join(th[k], NULL);
        CK(cudaHostRegister(mem, bytes, cudaHostRegisterDefault));
    }
    pin_sec = now() - t0;
    return NULL;
}

static void unpin(void)
{
    if (way == 0) {
        CK(cudaFreeHost(mem));
    } else {
        CK(cudaHostUnregister(mem));
        free(mem);
    }
}

// 8 GiB of 64 MiB copies, two in flight, as the ring moves op(B)
static double copies(void *src, void *dst, cudaStream_t s)
{
    const size_t chunk = (size_t)64 << 20;
    double t0 = now();
    for (int i = 0; i < 128; i++) {
        CK(cudaMemcpyAsync((char *)dst + (size_t)(i % 16) * chunk, (char *)src + (size_t)(i % 2) * chunk,
                           chunk, cudaMemcpyHostToDevice, s));
        if (i % 2)
            CK(cudaStreamSynchronize(s));
    }
    CK(cudaStreamSynchronize(s));
    return now() - t0;
}

int main(int argc, char **argv)
{
    bytes = (size_t)(argc > 1 ? atoll(argv[1]) : 320) << 20;
    void *src, *dst;
    cudaStream_t s;
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaHostAlloc(&src, (size_t)128 << 20, cudaHostAllocDefault));
    CK(cudaMalloc(&dst, (size_t)1 << 30));
    copies(src, dst, s); // warm
    for (int rep = 0; rep < 3; rep++)
        for (way = 0; way < 2; way++) {
            const char *name = way ? "malloc+touch+cudaHostRegister" : "cudaHostAlloc";
            double alone_copy = copies(src, dst, s);
            pin(NULL);
            double alone_pin = pin_sec;
            unpin();
            pthread_t th;
            pthread_create(&th, NULL, pin, NULL);
            double beside = copies(src, dst, s);
            pthread_join(th, NULL);
            double pin_beside = pin_sec;
            unpin();
            printf("%-30s %zu MiB: pin alone %.3f s (%.2f GB/s); 8 GiB of copies alone %.3f s, beside the "
                   "pinning %.3f s (pin %.3f s)\n",
                   name, bytes >> 20, alone_pin, bytes / alone_pin / 1e9, alone_copy, beside, pin_beside);
        }
    return 0;
}
