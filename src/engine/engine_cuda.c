/* engine_cuda.c — the CUDA engine: the device, a compute stream, a
 * communication stream and the kernel registry's multiply (engine.h); its
 * memory, copies and pipeline marks are engine_cuda_mem.c's.
 *
 * Streams.  Both are non-blocking (no implicit sync with the legacy default
 * stream).  The communication stream gets the highest priority the device
 * offers: when a multiply fills every SM, the broadcast kernels (NCCL) or
 * copies queued behind it are scheduled first as SMs free up, so panel t+1
 * is not starved by the multiply of panel t.
 *
 * Timing.  Every gemm() brackets its launch with two events on the compute
 * stream; phase_begin/phase_end put two more around the SUMMA loop.  So the
 * phase time is the compute stream's timeline and phase − Σ gemm is the time
 * it sat idle waiting for panels: the exposed communication.  Events are
 * pooled and reused after reset_timers(), never created per multiply in
 * steady state.
 *
 * GPU choice.  Rank i on a host takes GPU i % (visible GPUs).  Sharing is
 * measured, not assumed: the node communicator is split by the GPU's PCI
 * location, so a job where each rank sees only "its" GPU (Slurm's
 * CUDA_VISIBLE_DEVICES binding, every rank on "device 0") counts as
 * exclusive, as it is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "dd_cuda.h"
#include "engine_cuda_impl.h"
#include "kernel.h"

static void cuda_close(dd_engine *e);

/* Whether kernel k offers type t. */
static int offers(const kernel_desc *k, dd_dtype t)
{
    return t == DD_F64 ? k->dgemm != NULL : t == DD_F32 ? k->sgemm != NULL
                                        : t == DD_C128 ? k->zgemm != NULL
                                                       : k->cgemm != NULL;
}

/* "FP64", "FP32", "complex FP64", "complex FP32". */
static const char *type_words(dd_dtype t)
{
    return t == DD_F64 ? "FP64" : t == DD_F32 ? "FP32" : t == DD_C128 ? "complex FP64" : "complex FP32";
}

/* "a, b, c" of the kernels offering type t (t < 0: all kernels). */
static void kernel_names(int t, char *buf, size_t len)
{
    int n = 0;
    const kernel_desc *k = kernel_list(&n);
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < len; i++) {
        if (t >= 0 && !offers(&k[i], (dd_dtype)t))
            continue;
        int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", k[i].name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

const char *cuda_host_name(void)
{
    static char host[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    if (!host[0] && MPI_Get_processor_name(host, &len) != MPI_SUCCESS)
        snprintf(host, sizeof host, "(unknown)");
    return host;
}

/* Pick this rank's GPU.  Local: a failure here is returned after the node
 * exchange, so that every rank of the node reaches it. */
static int pick_device(const dd_engine_cfg *cfg, int *device, struct cudaDeviceProp *prop,
                       dd_err *err)
{
    int count = 0, lrank = 0, rc;
    if ((rc = dd_mpi_check(MPI_Comm_rank(cfg->node, &lrank), "MPI_Comm_rank(node)", err)))
        return rc;
    cudaError_t cr = cudaGetDeviceCount(&count);
    /* Without a GPU the runtime often says the driver is too old (there is
     * none); that would send a user to upgrade a driver they do not need. */
    if (cr == cudaErrorInsufficientDriver || cr == cudaErrorNoDevice ||
        (cr == cudaSuccess && count == 0))
        return dd_fail(err, DD_EUNSUP, "no GPU on host %s", cuda_host_name());
    if (cr != cudaSuccess)
        return dd_fail(err, DD_EUNSUP, "no usable CUDA GPU on host %s (cudaGetDeviceCount: %s)",
                       cuda_host_name(), cudaGetErrorString(cr));
    *device = lrank % count;
    if ((cr = cudaSetDevice(*device)) != cudaSuccess)
        return dd_fail(err, DD_EFAIL, "cudaSetDevice(%d) on host %s failed: %s", *device,
                       cuda_host_name(), cudaGetErrorString(cr));
    if ((cr = cudaGetDeviceProperties(prop, *device)) != cudaSuccess)
        return dd_fail(err, DD_EFAIL, "cudaGetDeviceProperties(%d) on host %s failed: %s", *device,
                       cuda_host_name(), cudaGetErrorString(cr));
    return DD_OK;
}

/* Max over the node of ranks on one physical GPU.  Collective over
 * cfg->node; a rank without a GPU (ok == 0) takes part and counts for none.
 * The PCI location is unique on a host (MIG slices of one GPU count as
 * sharing it). */
static int node_sharing(const dd_engine_cfg *cfg, int ok, const struct cudaDeviceProp *prop,
                        int *ranks_per_device, dd_err *err)
{
    int color = ok ? (prop->pciDomainID & 0xffff) << 13 | (prop->pciBusID & 0xff) << 5 |
                         (prop->pciDeviceID & 0x1f)
                   : MPI_UNDEFINED;
    int lrank = 0, mine = 0, most = 0, rc;
    MPI_Comm same = MPI_COMM_NULL;
    if ((rc = dd_mpi_check(MPI_Comm_rank(cfg->node, &lrank), "MPI_Comm_rank(node)", err)) ||
        (rc = dd_mpi_check(MPI_Comm_split(cfg->node, color, lrank, &same),
                           "MPI_Comm_split of the node by GPU", err)))
        return rc;
    if (same != MPI_COMM_NULL) {
        rc = dd_mpi_check(MPI_Comm_size(same, &mine), "MPI_Comm_size", err);
        MPI_Comm_free(&same);
    }
    int rc2 = dd_mpi_check(MPI_Allreduce(&mine, &most, 1, MPI_INT, MPI_MAX, cfg->node),
                           "MPI_Allreduce of GPU sharing on the node", err);
    *ranks_per_device = most > 1 ? most : 1;
    return rc ? rc : rc2;
}

/* The kernel of this run: --kernel, or the production kernel of the type.
 * A kernel without the run's type is refused here, before any data moves. */
int cuda_pick_kernel(cuda_state *s, const char *forced, dd_dtype t, dd_err *err)
{
    char names[400];
    if (forced && !(s->kd = kernel_find(forced))) {
        kernel_names(-1, names, sizeof names);
        return dd_fail(err, DD_EUSAGE, "unknown kernel '%s'; choose one of: %s", forced, names);
    }
    if (!forced) {
        const char *name = t == DD_C128  ? DD_KERNEL_DEFAULT_C128
                           : t == DD_C64 ? DD_KERNEL_DEFAULT_C64
                                         : kernel_default(t == DD_F64);
        const kernel_desc *kd = name ? kernel_find(name) : NULL;
        if (dd_dtype_complex(t) && (!kd || !offers(kd, t))) {
            kernel_names(t, names, sizeof names);
            return dd_fail(err, DD_EUNSUP,
                           "the CUDA backend cannot multiply %s (%s) yet: its kernel '%s' has no "
                           "such version in this build%s%s%s; use --backend cpu",
                           dd_dtype_name(t), type_words(t), name, names[0] ? " (kernels with one: " : "",
                           names[0] ? names : "", names[0] ? ")" : "");
        }

        if (!name || !(s->kd = kernel_find(name)))
            return dd_fail(err, DD_EFAIL,
                           "the default %s kernel '%s' is not in the kernel registry",
                           dd_dtype_name(t), name ? name : "(none)");
    }
    if (!offers(s->kd, t)) {
        kernel_names(t, names, sizeof names);
        return dd_fail(err, dd_dtype_complex(t) && !names[0] ? DD_EUNSUP : DD_EUSAGE,
                       "kernel '%s' has no %s version and the input is %s; kernels with one: %s",
                       s->kd->name, type_words(t), dd_dtype_name(t), names[0] ? names : "none");
    }
    return DD_OK;
}

static int make_streams(cuda_state *s, dd_err *err)
{
    int least = 0, greatest = 0, rc;
    if ((rc = dd_cuda_check(cudaDeviceGetStreamPriorityRange(&least, &greatest),
                            "cudaDeviceGetStreamPriorityRange", err)) ||
        (rc = dd_cuda_check(cudaStreamCreateWithPriority(&s->compute, cudaStreamNonBlocking, least),
                            "cudaStreamCreateWithPriority (compute stream)", err)) ||
        (rc = dd_cuda_check(cudaStreamCreateWithPriority(&s->comm, cudaStreamNonBlocking, greatest),
                            "cudaStreamCreateWithPriority (communication stream)", err)) ||
        (rc = dd_cuda_check(cudaStreamCreateWithPriority(&s->down, cudaStreamNonBlocking, least),
                            "cudaStreamCreateWithPriority (download stream)", err)) ||
        (rc = dd_cuda_check(cudaEventCreate(&s->phase0), "cudaEventCreate", err)) ||
        (rc = dd_cuda_check(cudaEventCreate(&s->phase1), "cudaEventCreate", err)))
        return rc;
    for (int i = 0; i < DD_ENGINE_MARKS; i++)
        if ((rc = dd_cuda_check(cudaEventCreateWithFlags(&s->mk[i], cudaEventDisableTiming),
                                "cudaEventCreateWithFlags (a pipeline mark)", err)))
            return rc;
    return DD_OK;
}

static void fill_info(dd_engine *e, const struct cudaDeviceProp *prop)
{
    cuda_state *s = e->impl;
    dd_engine_info *in = &e->info;
    int rt = 0, drv = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    snprintf(in->device, sizeof in->device, "%.*s", (int)sizeof in->device - 1, prop->name);
    snprintf(in->kernel, sizeof in->kernel, "%s", s->kd->name);
    in->panel = kernel_panel(s->kd);
    snprintf(in->versions, sizeof in->versions, "CUDA runtime %d.%d, driver %d.%d, cuBLAS %s",
             rt / 1000, rt % 1000 / 10, drv / 1000, drv % 1000 / 10, kernel_cublas_version());
    in->device_index = s->device;
}

static int cuda_open(dd_engine *e, const dd_engine_cfg *cfg, dd_err *err)
{
    struct cudaDeviceProp prop;
    memset(&prop, 0, sizeof prop);
    memset(&e->info, 0, sizeof e->info);
    e->impl = NULL;
    int device = -1;
    int rc = pick_device(cfg, &device, &prop, err);
    int rc2 = node_sharing(cfg, rc == DD_OK, &prop, &e->info.ranks_per_device, err);
    if (rc || (rc = rc2))
        return rc;

    cuda_state *s = calloc(1, sizeof *s);
    if (!s)
        return dd_fail(err, DD_ENOMEM, "out of host memory opening the CUDA engine");
    s->device = device;
    e->impl = s;
    if ((rc = cuda_pick_kernel(s, cfg->kernel, cfg->type, err)) || (rc = make_streams(s, err)) ||
        (rc = dd_cuda_check(cudaMemGetInfo(&e->info.mem_free, &e->info.mem_total), "cudaMemGetInfo",
                            err))) {
        cuda_close(e);
        return rc;
    }
    fill_info(e, &prop);
    s->tele = cuda_telemetry_open(device);
    return DD_OK;
}

static void cuda_close(dd_engine *e)
{
    cuda_state *s = e->impl;
    if (!s)
        return;
    /* Nothing to report from here (close returns void): errors of work
     * still queued surfaced at the sync that preceded it. */
    if (s->compute)
        cudaStreamSynchronize(s->compute);
    if (s->comm)
        cudaStreamSynchronize(s->comm);
    if (s->down)
        cudaStreamSynchronize(s->down);
    /* a kernel's note: ozaki2's native fallbacks, sgemm_dmma's calls on sgemm_simt;
     * the one the note op read when nothing ran since */
    const char *note = kernel_note();
    if (!note[0])
        note = s->note;
    if (note[0])
        fprintf(stderr, "dgemm-dist: kernel %s: %s\n", s->kd ? s->kd->name : "?", note);
    kernel_shutdown();
    for (int i = 0; i < s->cap; i++)
        cudaEventDestroy(s->ev[i]);
    free(s->ev);
    cudaFree(s->missed);
    if (s->phase0)
        cudaEventDestroy(s->phase0);
    if (s->phase1)
        cudaEventDestroy(s->phase1);
    if (s->compute)
        cudaStreamDestroy(s->compute);
    if (s->comm)
        cudaStreamDestroy(s->comm);
    if (s->down)
        cudaStreamDestroy(s->down);
    for (int i = 0; i < DD_ENGINE_MARKS; i++)
        if (s->mk[i])
            cudaEventDestroy(s->mk[i]);
    if (s->aux)
        cudaFree(s->aux);
    if (s->tbuf)
        cudaFree(s->tbuf);
    dd_tele_close(s->tele);
    free(s);
    e->impl = NULL;
}

void engine_cuda_prestart(int local_rank, int *device)
{
    int count = 0;
    *device = -1;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1)
        return;
    int d = local_rank % count;
    if (cudaSetDevice(d) == cudaSuccess && cudaFree(0) == cudaSuccess)
        *device = d;
}

/* A guessed GPU the engine did not take: its context (made by
 * engine_cuda_prestart, nothing allocated in it) destroyed, the current
 * device kept. */
void engine_cuda_forget(int device)
{
    int cur = -1;
    int have = cudaGetDevice(&cur) == cudaSuccess;
    if (cudaSetDevice(device) == cudaSuccess)
        cudaDeviceReset();
    if (have && cur != device)
        cudaSetDevice(cur);
}

/* The current device is the one open() chose; close() freed what the
 * engine made, the reset returns the context itself. */
static void cuda_release_device(dd_engine *e)
{
    (void)e;
    cudaDeviceReset();
}

int cuda_event_pair(cuda_state *s, cudaEvent_t **pair, dd_err *err)
{
    if (s->nev + 2 > s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        cudaEvent_t *ev = realloc(s->ev, (size_t)cap * sizeof *ev);
        if (!ev)
            return dd_fail(err, DD_ENOMEM, "out of host memory for timing events");
        s->ev = ev;
        for (; s->cap < cap; s->cap++) {
            int rc = dd_cuda_check(cudaEventCreate(&s->ev[s->cap]), "cudaEventCreate", err);
            if (rc)
                return rc;
        }
    }
    *pair = &s->ev[s->nev];
    s->nev += 2;
    return DD_OK;
}

static int launch(const kernel_desc *kd, dd_dtype t, int64_t m, int64_t n, int64_t k, const void *A,
                  int64_t lda, const void *B, int64_t ldb, int beta, void *C, int64_t ldc,
                  cudaStream_t stream)
{
    if (t == DD_F64)
        return kd->dgemm(m, n, k, A, lda, B, ldb, beta, C, ldc, (void *)stream);
    if (t == DD_F32)
        return kd->sgemm(m, n, k, A, lda, B, ldb, beta, C, ldc, (void *)stream);
    if (t == DD_C128) /* interleaved pairs; op() applied before (engine.h) */
        return kd->zgemm(m, n, k, A, lda, B, ldb, beta, C, ldc, (void *)stream);
    return kd->cgemm(m, n, k, A, lda, B, ldb, beta, C, ldc, (void *)stream);
}

static int cuda_gemm(dd_engine *e, dd_dtype t, int64_t m, int64_t n, int64_t k, const void *A,
                     int64_t lda, const void *B, int64_t ldb, int beta, void *C, int64_t ldc,
                     dd_progress_fn progress, void *parg, dd_err *err)
{
    cuda_state *s = e->impl;
    const kernel_desc *kd = s->kd;
    if (!offers(kd, t))
        return dd_fail(err, DD_EUSAGE, "kernel '%s' has no %s version", kd->name, type_words(t));
    int rc;
    if (m > 0 && n > 0) {
        cudaEvent_t *ev = NULL;
        if ((rc = cuda_event_pair(s, &ev, err)) ||
            (rc = dd_cuda_check(cudaEventRecord(ev[0], s->compute), "cudaEventRecord", err)))
            return rc;
        int kr = launch(kd, t, m, n, k, A, lda, B, ldb, beta, C, ldc, s->compute);
        if (kr != cudaSuccess)
            return dd_fail(err, DD_EFAIL, "kernel '%s' %s launch (m=%lld n=%lld k=%lld) failed: %s",
                           kd->name,
                           t == DD_F64    ? "dgemm"
                           : t == DD_F32  ? "sgemm"
                           : t == DD_C128 ? "zgemm"
                                          : "cgemm",
                           (long long)m, (long long)n,
                           (long long)k, cudaGetErrorString((cudaError_t)kr));
        if ((rc = dd_cuda_check(cudaEventRecord(ev[1], s->compute), "cudaEventRecord", err)))
            return rc;
    }
    /* The GPU computes; the host is free to move the next panels. */
    return progress ? progress(parg, err) : DD_OK;
}

static void cuda_reset(dd_engine *e)
{
    ((cuda_state *)e->impl)->nev = 0;
    ((cuda_state *)e->impl)->nmissed = 0;
}

static int cuda_begin(dd_engine *e, dd_err *err)
{
    cuda_state *s = e->impl;
    return dd_cuda_check(cudaEventRecord(s->phase0, s->compute), "cudaEventRecord (phase start)",
                         err);
}

static int cuda_end(dd_engine *e, double *seconds, double *gemm_seconds, dd_err *err)
{
    cuda_state *s = e->impl;
    *seconds = *gemm_seconds = 0;
    int rc;
    if ((rc = dd_cuda_check(cudaEventRecord(s->phase1, s->compute), "cudaEventRecord (phase end)",
                            err)) ||
        (rc = dd_cuda_check(cudaEventSynchronize(s->phase1),
                            "cudaEventSynchronize (end of the multiply phase)", err)) ||
        (rc = cuda_elapsed(s->phase0, s->phase1, seconds, err)))
        return rc;
    for (int i = 0; i < s->nev; i += 2) {
        double g;
        if ((rc = cuda_elapsed(s->ev[i], s->ev[i + 1], &g, err)))
            return rc;
        *gemm_seconds += g;
    }
    return DD_OK;
}

static void *cuda_comm_stream(dd_engine *e)
{
    return (void *)((cuda_state *)e->impl)->comm;
}

static void *cuda_compute_stream(dd_engine *e)
{
    return (void *)((cuda_state *)e->impl)->compute;
}

/* The kernels' counts and note so far, each kept (kernel_counts and
 * kernel_note reset theirs): the note for close to print, both for the
 * record. */
static const char *cuda_note(dd_engine *e)
{
    cuda_state *s = e->impl;
    const char *n = kernel_note(), *c = kernel_counts();
    if (n[0])
        snprintf(s->note, sizeof s->note, "%s", n);
    if (c[0])
        snprintf(s->counts, sizeof s->counts, "%s", c);
    snprintf(s->record, sizeof s->record, "%s%s%s", s->counts,
             s->counts[0] && s->note[0] ? "; " : "", s->note);
    return s->record;
}

const dd_engine_ops dd_engine_cuda = {
    .name = "cuda",
    .work_is_host = 0,
    /* 8192: on one GPU the panel width changes nothing from 4096 up; on two,
     * with dgemm_dmma and the copy engines, 8192 halves the panels of 4096
     * (each a kernel's tail and a broadcast beside the multiply) and scales
     * a little better (docs/results/h200x2-2026-12-01-pergpu-23) */
    .default_panel = 8192,
    .open = cuda_open,
    .close = cuda_close,
    .release_device = cuda_release_device,
    .retype = cuda_retype,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
    .upload = cuda_upload,
    .download = cuda_download,
    .upload_async = cuda_upload_async,
    .download_async = cuda_download_async,
    .upload_t_async = cuda_upload_t,
    .download_t_async = cuda_download_t,
    .wait_copies = cuda_wait_copies,
    .mark = cuda_mark,
    .after = cuda_after,
    .reached = cuda_reached,
    .download_side_async = cuda_download_side,
    .zero = cuda_zero,
    .gemm = cuda_gemm,
    .reset_timers = cuda_reset,
    .phase_begin = cuda_begin,
    .phase_end = cuda_end,
    .gemm_times = cuda_gemm_times,
    .comm_stream = cuda_comm_stream,
    .compute_stream = cuda_compute_stream,
    .absmax = cuda_absmax,
    .matvec = cuda_matvec,
    .fill_random = cuda_fill_random,
    .scale = cuda_scale,
    .cscale = cuda_cscale,
    .copy = cuda_copy,
    .telemetry_start = cuda_telemetry_start,
    .telemetry_stop = cuda_telemetry_stop,
    .note = cuda_note,
    .slices_bytes = cuda_slices_bytes,
    .slices_make = cuda_slices_make,
    .slices_gemm = cuda_slices_gemm,
    .slices_missed = cuda_slices_missed,
};
