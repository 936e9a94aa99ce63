/* knobs.c — the table of environment knobs and their one reader
 * (dd_knobs.h): each value read, parsed (knobs_parse.c) and kept, and the
 * warnings for bad ones.  The only file of the program and its libraries
 * that reads a DD_ variable. */
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dd_knobs.h"
#include "knobs_impl.h"

/* Who the warnings say they are from: libdgemm-dist-scalapack compiles
 * this file with its own name. */
#ifndef DD_KNOBS_WHO
#define DD_KNOBS_WHO "dgemm-dist"
#endif

static const char *const int8_products[] = {"auto", "cublas", NULL};
static const char *const ozaki2_panels[] = {"auto", "slices", "fp64", NULL};
static const char *const dropin_errors[] = {"pblas", "return", NULL};

static const dd_knob_spec table[DDK_COUNT] = {
    /* ---- the program ---- */
    [DDK_IO_THREADS] =
        {.name = "DD_IO_THREADS",
         .type = DD_KNOB_INT,
         .flags = DD_KNOB_PROGRAM | DD_KNOB_STRICT | DD_KNOB_AUTO,
         .dflt = 0,
         .lo = 1,
         .hi = 256,
         .dflt_text = "auto",
         .what =
             "threads per rank with which --io direct reads and writes its blocks; auto: reads "
             "take the rank's own cores (its CPU affinity, else the node's cores over its ranks), "
             "at most 16, and writes the same at most 4 (buffered writes to one file contend for "
             "its lock: past 4 they lose). A bad value is refused (exit 2)."},
    [DDK_PIPE_BAND_MIB] =
        {.name = "DD_PIPE_BAND_MIB",
         .type = DD_KNOB_SIZE,
         .flags = DD_KNOB_PROGRAM | DD_KNOB_AUTO,
         .dflt = 0,
         .lo = 1,
         .hi = 65536,
         .unit = "MiB",
         .dflt_text = "auto",
         .what = "the bytes of C in each band of the file-to-file pipeline (--in with --out); "
                 "auto: 64, and at least 256 rows of C, where the bands go through pinned memory "
                 "on one process row, else 256. Bands stay 4 or more, at most 256 (16 on several process rows), and no "
                 "more than the rows of a rank's block."},

    /* ---- the library ---- */
    [DDK_API_THREADS] =
        {.name = "DD_API_THREADS",
         .type = DD_KNOB_INT,
         .flags = DD_KNOB_LIBRARY | DD_KNOB_AUTO,
         .dflt = 0,
         .lo = 1,
         .hi = 64,
         .dflt_text = "auto",
         .what =
             "threads per rank with which the library copies and packs blocks (the "
             "redistribution between layouts, staging; a block of fewer than 2^20 elements takes "
             "one); auto: the node's cores over its ranks, 1 to 16."},
    [DDK_API_TIMING] =
        {.name = "DD_API_TIMING",
         .type = DD_KNOB_BOOL,
         .flags = DD_KNOB_LIBRARY,
         .dflt = 0,
         .dflt_text = "0",
         .what =
             "1: after each multiply of the library's entries (dd_gemm, dd_pgemm, the drop-in's), "
             "rank 0 prints on stderr the seconds of each of its steps."},
    [DDK_MODEL_INTER_LINK] =
        {.name = "DD_MODEL_INTER_LINK",
         .type = DD_KNOB_STRING,
         .flags = DD_KNOB_LIBRARY,
         .unit = "a link of src/model/tables/links.csv",
         .dflt_text = "the backend's",
         .what =
             "the link between nodes that the performance model (--grid, --panel, --lookahead "
             "auto, the prediction) assumes, in place of the backend's (nic-400g on CUDA, mpi-tcp "
             "on the CPU). A name the table lacks gets a warning and the backend's link."},
    [DDK_MODEL_LINK] =
        {.name = "DD_MODEL_LINK",
         .type = DD_KNOB_STRING,
         .flags = DD_KNOB_LIBRARY,
         .unit = "a link of src/model/tables/links.csv",
         .dflt_text = "the backend's",
         .what =
             "the link inside a node that the performance model assumes, in place of the comm "
             "backend's (nccl-nvlink, nccl-socket, ce-nvlink, mpi-staged on CUDA; mpi-shm on the "
             "CPU). A name the table lacks gets a warning and the backend's link."},
    [DDK_MODEL_RATES] =
        {.name = "DD_MODEL_RATES",
         .type = DD_KNOB_STRING,
         .flags = DD_KNOB_LIBRARY,
         .unit = "a CSV file",
         .dflt_text = "unset",
         .what =
             "rate rows in the format of src/model/tables/rates-*.csv (a calibration of this "
             "machine) that replace the compiled-in rates of the run's device, kernel, type and "
             "thread count. A file that cannot be opened, or has no row for the run, gets a "
             "warning and the compiled-in rates."},
    [DDK_MPI_CUDA_AWARE] =
        {.name = "DD_MPI_CUDA_AWARE",
         .type = DD_KNOB_BOOL,
         .flags = DD_KNOB_LIBRARY | DD_KNOB_STRICT,
         .dflt = -1,
         .dflt_text = "MPI's answer",
         .what =
             "--comm mpi on CUDA: 1 hands GPU memory to MPI, 0 stages every panel through pinned "
             "host memory; unset: MPIX_Query_cuda_support() where this MPI has it, else 0. A bad "
             "value is refused (exit 2)."},
    [DDK_MPI_STAGE_PIECES] =
        {.name = "DD_MPI_STAGE_PIECES",
         .type = DD_KNOB_INT,
         .flags = DD_KNOB_LIBRARY | DD_KNOB_STRICT | DD_KNOB_AUTO,
         .dflt = 0,
         .lo = 0,
         .hi = 4096,
         .dflt_text = "auto",
         .what =
             "--comm mpi staged through host memory: the pieces each panel's broadcast is cut "
             "into, so that copies overlap the sends; 0 or auto: one per 8 MiB, at most 8. Must be "
             "the same on every rank; a bad value is refused (exit 2)."},
    [DDK_OZAKI2_INT8] =
        {.name = "DD_OZAKI2_INT8",
         .type = DD_KNOB_CHOICE,
         .flags = DD_KNOB_LIBRARY,
         .dflt = 0,
         .choices = int8_products,
         .dflt_text = "auto",
         .what =
             "the INT8 products of --kernel ozaki2: auto, the project's own GEMM "
             "(kernels/i8gemm.cu) where the GPU runs it, else cuBLAS's; cublas: cuBLAS's always "
             "(for comparison)."},
    [DDK_OZAKI2_PANELS] =
        {.name = "DD_OZAKI2_PANELS",
         .type = DD_KNOB_CHOICE,
         .flags = DD_KNOB_LIBRARY,
         .dflt = 0,
         .choices = ozaki2_panels,
         .dflt_text = "auto",
         .what =
             "how SUMMA moves the panels of --kernel ozaki2 and ozaki2-N (FP64, more than one "
             "rank): slices, as the INT8 slices their owner makes once (receivers do not slice "
             "again; about N/8 times the bytes of FP64); fp64, in FP64, each rank slicing what it "
             "receives; auto, slices where the panels move GPU to GPU (--comm ce or nccl), fp64 "
             "through MPI and on the CPU backend. Must be the same on every rank (refused "
             "otherwise)."},
    [DDK_OZAKI2_TILE_MB] =
        {.name = "DD_OZAKI2_TILE_MB",
         .type = DD_KNOB_SIZE,
         .flags = DD_KNOB_LIBRARY | DD_KNOB_AUTO,
         .dflt = 0,
         .lo = 1,
         .hi = 1048576,
         .unit = "MiB",
         .dflt_text = "auto",
         .what = "GPU memory in which --kernel ozaki2 holds its products at once; auto: 8192, or a "
                 "quarter of the GPU's free memory where that is less (at least 256)."},
    [DDK_RING_MIB] =
        {.name = "DD_RING_MIB",
         .type = DD_KNOB_SIZE,
         .flags = DD_KNOB_LIBRARY,
         .dflt = 64,
         .lo = 1,
         .hi = 4096,
         .unit = "MiB",
         .dflt_text = "64",
         .what = "each of the two pinned host buffers through which blocks move, in bands, between "
                 "host memory (the files, host arrays) and the GPU."},
    [DDK_SGEMM_WORKSPACE_MIB] =
        {.name = "DD_SGEMM_WORKSPACE_MIB",
         .type = DD_KNOB_SIZE,
         .flags = DD_KNOB_LIBRARY,
         .dflt = -1,
         .lo = 0,
         .hi = (1LL << 43) - 1,
         .unit = "MiB",
         .dflt_text = "no bound",
         .what =
             "the most GPU memory one sgemm_dmma multiply takes for the FP64 copies of A and B; "
             "a multiply that needs more runs sgemm_simt (0: every one does), and the run says "
             "how many did; unset: the GPU's free memory is the bound."},

    /* ---- the drop-in ---- */
    /* a string: the library checks the name (dd_context_create), as it does --backend's */
    [DDK_SCALAPACK_BACKEND] =
        {.name = "DD_SCALAPACK_BACKEND",
         .type = DD_KNOB_STRING,
         .flags = DD_KNOB_DROPIN,
         .unit = "a --backend name",
         .dflt_text = "auto",
         .what =
             "the backend of the contexts that libdgemm-dist-scalapack opens: auto (CUDA where "
             "every rank has a GPU, else the CPU), cuda or cpu. Where auto gives the CPU and a "
             "ScaLAPACK is linked after the drop-in, the calls go to ScaLAPACK's PDGEMM/PSGEMM/PZGEMM/PCGEMM "
             "(faster there); cpu makes dgemm-dist serve them. A name the library refuses serves "
             "no call: each goes to the ScaLAPACK routine linked after it, with one note naming "
             "the value."},
    [DDK_SCALAPACK_ERRORS] =
        {.name = "DD_SCALAPACK_ERRORS",
         .type = DD_KNOB_CHOICE,
         .flags = DD_KNOB_DROPIN,
         .dflt = 0,
         .choices = dropin_errors,
         .dflt_text = "pblas",
         .what =
             "an illegal argument to the drop-in's PDGEMM/PSGEMM/PZGEMM/PCGEMM: pblas reports it as PBLAS does, "
             "through the program's PB_Cabort with PBLAS's number (ScaLAPACK's aborts the job; "
             "without one the call returns), after one line from the grid saying what to change; "
             "return never calls PB_Cabort: the line, and the call returns with C untouched "
             "(dd_scalapack_last_info() gives the number)."},
    [DDK_SCALAPACK_SUMMARY] =
        {.name = "DD_SCALAPACK_SUMMARY",
         .type = DD_KNOB_BOOL,
         .flags = DD_KNOB_DROPIN,
         .dflt = 0,
         .dflt_text = "0",
         .what = "1: at MPI_Finalize every process that called the drop-in prints one line on "
                 "stderr: how many PDGEMM/PSGEMM/PZGEMM/PCGEMM calls dgemm-dist served, handed on to ScaLAPACK "
                 "and refused as illegal."},
    [DDK_SCALAPACK_VERBOSE] =
        {.name = "DD_SCALAPACK_VERBOSE",
         .type = DD_KNOB_BOOL,
         .flags = DD_KNOB_DROPIN,
         .dflt = 0,
         .dflt_text = "0",
         .what = "1: process (0,0) of a grid says once on stderr who serves its PDGEMM or PSGEMM: "
                 "dgemm-dist, with the backend and the grid, or ScaLAPACK, and why."},

    /* ---- test hooks ---- */
    [DDK_FAULT] =
        {.name = "DD_FAULT",
         .type = DD_KNOB_STRING,
         .flags = DD_KNOB_TEST | DD_KNOB_PROGRAM | DD_KNOB_LIBRARY,
         .unit = "point:rank,...",
         .dflt_text = "unset",
         .what =
             "makes the named fault point true on that rank (a number, or * for every rank), so "
             "that a test can make one rank fail at a named place (setup, multiply, write, "
             "exchange-alloc, ...) and check that every rank ends alike (src/base/dd_fault.h)."},
    [DDK_REDIST_LIMIT] =
        {.name = "DD_REDIST_LIMIT",
         .type = DD_KNOB_SIZE,
         .flags = DD_KNOB_TEST | DD_KNOB_LIBRARY,
         .dflt = INT_MAX,
         .lo = 1,
         .hi = INT_MAX,
         .unit = "elements",
         .dflt_text = "2147483647",
         .what = "the most elements one message of a redistribution's exchange carries: a smaller "
                 "limit takes the exchange into rounds of MPI_Alltoallw, the path of counts beyond "
                 "MPI's int, with small matrices."},
};

const dd_knob_spec *dd_knob_spec_of(dd_knob k)
{
    return (int)k >= 0 && k < DDK_COUNT ? &table[k] : NULL;
}

/* ---- the state: one slot per knob ------------------------------------------------- */

typedef struct retired {
    struct retired *next;
    char *raw;
} retired;

typedef struct {
    int seen;      /* parsed at least once */
    char *raw;     /* a copy of the value parsed (NULL: unset) */
    int state;     /* 0 unset or auto, 1 set and valid, -1 bad */
    long long num; /* the value used */
    int warned;    /* the warning for raw was given */
    char why[64];  /* what is wrong with raw */
} slot;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static slot slots[DDK_COUNT];
/* copies a getter handed out before the value changed: kept, so that the
 * pointers stay valid (only a test changes the environment in a process) */
static retired *old_copies;
static int world_rank = -1; /* MPI_COMM_WORLD's rank once learnt */

/* The slot of k brought up to the environment's value (lock held). */
static slot *refresh(dd_knob k)
{
    slot *sl = &slots[k];
    const dd_knob_spec *s = &table[k];
    const char *now = getenv(s->name);
    if (now && !*now)
        now = NULL;
    if (sl->seen && (now ? sl->raw && !strcmp(now, sl->raw) : !sl->raw))
        return sl;
    char *copy = now ? strdup(now) : NULL;
    if (now && !copy)
        return sl; /* out of memory: the value parsed before stays */
    if (sl->raw) {
        retired *r = malloc(sizeof *r);
        if (r) {
            *r = (retired){old_copies, sl->raw};
            old_copies = r;
        } /* else the old copy is lost, not freed: a pointer to it may be held */
    }
    sl->seen = 1;
    sl->raw = copy;
    sl->warned = 0;
    sl->why[0] = '\0';
    sl->num = s->dflt;
    sl->state = 0;
    if (copy) {
        int r = dd_knob_parse(s, copy, &sl->num, sl->why, sizeof sl->why);
        sl->state = r == 0 ? 1 : r == 1 ? 0 : -1;
        if (r < 0)
            sl->num = s->dflt;
    }
    return sl;
}

/* The rank given by the launcher's environment (mpirun, srun), -1 if none. */
static int launcher_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID"};
    for (int i = 0; i < 4; i++) {
        const char *v = getenv(vars[i]);
        long long r;
        if (v && dd_knob_whole_number(v, 0, &r) == 0 && r <= INT_MAX)
            return (int)r;
    }
    return -1;
}

/* Whether this process gives a getter's warnings: MPI_COMM_WORLD's rank 0
 * (asked of MPI on a thread that may call it, else as learnt before or as
 * the launcher says), or any process whose rank nothing tells. */
static int world_speaker(void)
{
    int up = 0, down = 0;
    if (MPI_Initialized(&up) == MPI_SUCCESS && up && MPI_Finalized(&down) == MPI_SUCCESS && !down) {
        int level = MPI_THREAD_SINGLE, main_thread = 0, r;
        if (MPI_Query_thread(&level) == MPI_SUCCESS &&
            MPI_Is_thread_main(&main_thread) == MPI_SUCCESS &&
            (main_thread || level == MPI_THREAD_MULTIPLE) &&
            MPI_Comm_rank(MPI_COMM_WORLD, &r) == MPI_SUCCESS)
            world_rank = r;
    }
    int rank = world_rank >= 0 ? world_rank : launcher_rank();
    return rank <= 0;
}

/* The value as a message shows it: at most 64 bytes, control bytes as '?'. */
static void shown(const char *raw, char *out, size_t len)
{
    size_t n = 0;
    for (; raw[n] && n < 64 && n + 1 < len; n++)
        out[n] = (unsigned char)raw[n] < 32 || raw[n] == 127 ? '?' : raw[n];
    out[n] = '\0';
    if (raw[n] && len > 4 && n + 4 < len)
        strcpy(out + n, "...");
}

/* The one line of a warning: the knob, the value, what is wrong with it
 * (the range where the table's parse found it bad) and what is used. */
static void warn(const dd_knob_spec *s, const char *raw, const char *why, int range_too,
                 const char *instead)
{
    char v[80], range[160] = "";
    shown(raw, v, sizeof v);
    if (range_too) {
        range[0] = ' ', range[1] = '(';
        dd_knob_range(s, range + 2, sizeof range - 3);
        strcat(range, ")");
    }
    fprintf(stderr, "%s: warning: %s=\"%s\" %s%s; using %s\n", DD_KNOBS_WHO, s->name, v, why, range,
            instead);
}

/* The default as a warning names it. */
static void instead_of(const dd_knob_spec *s, char *out, size_t len)
{
    snprintf(out, len, "%s (the default)", s->dflt_text);
}

/* A getter's warning for k's bad value, when it is due (lock held). */
static void getter_warning(dd_knob k, slot *sl)
{
    const dd_knob_spec *s = &table[k];
    if (sl->state >= 0 || sl->warned || (s->flags & DD_KNOB_STRICT) || !world_speaker())
        return;
    char instead[96];
    instead_of(s, instead, sizeof instead);
    warn(s, sl->raw, sl->why, 1, instead);
    sl->warned = 1;
}

long long dd_knob_int(dd_knob k)
{
    if (!dd_knob_spec_of(k))
        return 0;
    pthread_mutex_lock(&lock);
    slot *sl = refresh(k);
    getter_warning(k, sl);
    long long v = sl->num;
    pthread_mutex_unlock(&lock);
    return v;
}

const char *dd_knob_str(dd_knob k)
{
    if (!dd_knob_spec_of(k))
        return NULL;
    pthread_mutex_lock(&lock);
    slot *sl = refresh(k);
    getter_warning(k, sl);
    const char *v = sl->state == 1 ? sl->raw : NULL;
    pthread_mutex_unlock(&lock);
    return v;
}

int dd_knob_is_set(dd_knob k)
{
    return dd_knob_str(k) != NULL;
}

int dd_knob_error(dd_knob k, char *msg, size_t len)
{
    const dd_knob_spec *s = dd_knob_spec_of(k);
    if (!s)
        return 0;
    pthread_mutex_lock(&lock);
    slot *sl = refresh(k);
    int bad = sl->state < 0;
    if (bad && len) {
        char v[80], range[160];
        shown(sl->raw, v, sizeof v);
        dd_knob_range(s, range, sizeof range);
        snprintf(msg, len, "%s=\"%s\" %s; set it to %s, or unset it (dgemm-dist --help-env)",
                 s->name, v, sl->why, range);
    }
    pthread_mutex_unlock(&lock);
    return bad;
}

void dd_knob_reject(dd_knob k, int rank, const char *why, const char *instead)
{
    if (!dd_knob_spec_of(k))
        return;
    pthread_mutex_lock(&lock);
    slot *sl = refresh(k);
    if (sl->raw && !sl->warned && (rank >= 0 ? rank == 0 : world_speaker())) {
        warn(&table[k], sl->raw, why, 0, instead);
        sl->warned = 1;
    }
    pthread_mutex_unlock(&lock);
}

void dd_knobs_warn(unsigned readers, int speak)
{
    pthread_mutex_lock(&lock);
    for (int k = 0; k < DDK_COUNT; k++) {
        const dd_knob_spec *s = &table[k];
        if (!(s->flags & readers & DD_KNOB_READERS) || (s->flags & DD_KNOB_STRICT))
            continue;
        slot *sl = refresh((dd_knob)k);
        if (sl->state < 0 && !sl->warned && speak) {
            char instead[96];
            instead_of(s, instead, sizeof instead);
            warn(s, sl->raw, sl->why, 1, instead);
            sl->warned = 1;
        }
    }
    pthread_mutex_unlock(&lock);
}
